"""`pocket package`: plan the targets, build them, assemble the artifacts, check them, write the
manifest. Every artifact is checked (packaging/checks.py) before the manifest is written; a
failed check is an error, never a warning.
"""

from __future__ import annotations

import json
import os
import shutil
import time

from . import android, apple, checks, manifest, native, selective, targets, wheel
from .errors import PackageError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
VERSION = "0.1.0"
TRIPLES = {"linux-x86_64": "x86_64-unknown-linux-gnu", "linux-aarch64": "aarch64-unknown-linux-gnu"}


def source_root() -> str:
    """The Pocket source tree (the CMake project): packaging needs it, a wheel alone is not enough."""
    root = os.environ.get("POCKET_SOURCE_DIR") or ROOT
    if not os.path.isfile(os.path.join(root, "CMakePresets.json")):
        # An installed pocket.packaging lives under site-packages; the sources are elsewhere.
        raise PackageError("pocket package builds from the Pocket source tree: run it from a checkout "
                           "(pip install -e .) or set POCKET_SOURCE_DIR to one")
    return root


def package(programs=(), out="dist", target_spec=None, ndk=None, standin=False, release=False,
            swift_url=None, say=print) -> str:
    """Builds the artifacts into `out`; returns the manifest's path."""
    root = source_root()
    if release and standin:
        raise PackageError("--standin builds test-only artifacts and cannot make a release; drop one of them")
    names = targets.expand(target_spec) if target_spec else targets.default_targets()
    plans = [(targets.TARGETS[n], *targets.plan(targets.TARGETS[n], ndk, standin)) for n in names if n in targets.TARGETS]
    if release and any(s for _, _, s in plans):
        raise PackageError("a release needs every target built with its real toolchain")
    out = os.path.abspath(out)
    _prepare_out(out)
    work = os.path.join(root, "build", "package")
    os.makedirs(work, exist_ok=True)
    start = time.monotonic()

    ops = kernel_table = None
    if programs:
        ops = selective.program_ops(list(programs))
        kernel_table = selective.write_kernel_table(root, ops, os.path.join(out, "selective"))
        say(f"selective build: {len(ops)} ops from {len(programs)} program(s)")

    builds = []
    for target, preset, is_standin in plans:
        b = native.build(root, target, preset, is_standin, kernel_table, work, say)
        b.target_info = target
        b.abi = target.abi
        builds.append(b)

    entries = _native_entries(root, out, builds, ops)
    linux = [b for b in builds if b.target_info.family == "linux"]
    droid = [b for b in builds if b.target_info.family == "android"]
    apples = [b for b in builds if b.target_info.family == "apple"]
    if linux or droid:
        say("  java: classes (Java 8), jars, AAR, Maven repository")
        entries += android.build_all(root, out, VERSION, droid, linux, work, say)
    if apples:
        entries += _apple(root, out, apples, swift_url, say)
    if linux and "linux-x86_64" in {b.target for b in linux}:
        bundle = apple.artifact_bundle(root, out, apple.FRAMEWORK, {TRIPLES[b.target]: b.libs["libpocket.a"]
                                                                    for b in linux}, VERSION)
        entries.append({"kind": "swift-artifact-bundle", "path": bundle, "targets": [b.target for b in linux],
                        "standin": False})
    if "wheel" in names:
        entries.append({"kind": "wheel", "path": wheel.build_wheel(root, out, say),
                        "targets": ["python-" + _host_tag()], "standin": False})

    _check_all(root, out, entries, builds)
    path = manifest.write(out, VERSION, targets.git_commit(root), ops, entries)
    say(f"wrote {path} ({len(entries)} artifacts, {time.monotonic() - start:.0f} s)")
    return path


def _host_tag():
    import platform
    import sys
    return f"{sys.platform}-{platform.machine()}"


def _prepare_out(out):
    """Refuses to mix with unrelated files: `out` must be new, empty, or an earlier package output."""
    if os.path.exists(out):
        if not os.path.isdir(out):
            raise PackageError(f"--out {out} is a file")
        entries = os.listdir(out)
        if entries and "manifest.json" not in entries:
            raise PackageError(f"--out {out} is not empty and holds no manifest.json of an earlier "
                               "`pocket package`: refusing to overwrite it; choose a new folder")
        for name in entries:
            p = os.path.join(out, name)
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    os.makedirs(out, exist_ok=True)


def _native_entries(root, out, builds, ops):
    entries = []
    for b in builds:
        folder = os.path.join(out, "native", b.target + ("-standin" if b.standin else ""))
        os.makedirs(folder, exist_ok=True)
        for name, src in sorted(b.libs.items()):
            dst = os.path.join(folder, name)
            shutil.copyfile(src, dst)
            entry = {"kind": "native-lib", "path": dst, "targets": [b.target], "standin": b.standin,
                     "preset": b.preset}
            if name.endswith(".so"):
                entry["stripped_bytes"] = os.path.getsize(dst)
                entry["exported_symbols"] = checks.exported_symbols(dst)
            entries.append(entry)
    return entries


def _apple(root, out, builds, swift_url, say):
    standin = any(b.standin for b in builds)
    say("  apple: XCFramework, zip + checksum, Swift package" + (" (stand-in)" if standin else ""))
    framework = (apple.xcodebuild_xcframework(out, builds) if not standin and targets.has_xcode()
                 else apple.write_xcframework(root, out, builds))
    zip_path = apple.zip_dir(framework, framework + ".zip")
    pkg = apple.write_swift_package(root, out, VERSION, framework, zip_path, swift_url, standin)
    tnames = [b.target for b in builds]
    return [{"kind": "xcframework", "path": framework, "targets": tnames, "standin": standin},
            {"kind": "xcframework-zip", "path": zip_path, "targets": tnames, "standin": standin,
             "swiftpm_checksum": apple.checksum(zip_path)},
            {"kind": "swift-package", "path": pkg, "targets": tnames, "standin": standin}]


def _check_all(root, out, entries, builds):
    problems = []
    for b in builds:
        t = b.target_info
        if t.family in ("linux", "android"):
            for name in ("libpocket.so", "libpocket_jni.so"):
                problems += checks.check_elf(b.libs[name], t.elf_machine, f"{b.target}/{name}", root)
    for e in entries:
        if e["kind"] == "aar":
            abis = {b.abi: b.target_info.elf_machine for b in builds if b.target_info.family == "android"}
            problems += checks.check_aar(e["path"], root, abis, checks.framework_res())
        elif e["kind"] == "xcframework":
            problems += checks.check_xcframework(e["path"], root)
    if problems:
        raise PackageError("artifact checks failed:\n  " + "\n  ".join(problems))


def package_app(kind: str, model: str, out: str, app_name=None, app_id=None, target_spec=None, ndk=None,
                standin=False, say=print) -> str:
    """`pocket package --app`: an Android (Gradle) or iOS (Xcode) chat app project in `out`."""
    from . import app

    root = source_root()
    if kind not in ("android", "ios"):
        raise PackageError(f"--app {kind!r}: android or ios")
    app.check_model(model)
    name, ident = app.values(kind, app_name, app_id)
    out = os.path.abspath(out)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise PackageError(f"--out {out} exists and is not empty: refusing to overwrite it; choose a new folder")
    spec = target_spec or kind
    if any(targets.TARGETS[n].family != ("android" if kind == "android" else "apple") for n in targets.expand(spec)
           if n in targets.TARGETS):
        raise PackageError(f"--targets {spec} does not fit an {kind} app")
    dist = os.path.join(out, "pocket-dist")
    try:
        manifest_path = package((), out=dist, target_spec=spec, ndk=ndk, standin=standin, say=say)
    except PackageError:
        shutil.rmtree(out, ignore_errors=True)
        raise
    with open(manifest_path) as f:
        standin_built = json.load(f)["standin"]
    app.render_project(root, kind, model, out, name, ident, dist, VERSION + ("-standin" if standin_built else ""))
    say(f"wrote the {kind} app project {out} ({name}, {ident}); "
        + ("open it in Android Studio" if kind == "android" else "open PocketChat.xcodeproj in Xcode"))
    return out
