"""Checks of the artifacts, run by `pocket package` on everything it writes, by the tests (each
with a broken artifact it must reject) and by the release workflow. Each returns a list of
problems, empty when the artifact is good.
"""

from __future__ import annotations

import glob
import io
import os
import re
import shutil
import subprocess
import tempfile
import zipfile

PAGE_16K = 16384
# What a shipped .so may NEED: the C library family, Android's log, and libpocket for the JNI glue.
ALLOWED_NEEDED = {"libc.so", "libm.so", "libdl.so", "liblog.so", "libc.so.6", "libm.so.6", "libdl.so.2",
                  "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libpthread.so.0", "libpocket.so"}
EXPORTS = {"libpocket.so": "pk_", "libpocket_jni.so": None}  # libpocket_jni exports JNI_OnLoad only


def _lief():
    import lief
    lief.logging.disable()
    return lief


# ------------------------------------------------------------------ C API declarations

def declared_functions(root: str) -> set[str]:
    """pk_* functions declared (PK_API) in pocket.h and pocket_llm.h."""
    names = set()
    for header in ("runtime_core/include/pocket/pocket.h", "llm_runner/include/pocket/pocket_llm.h"):
        text = open(os.path.join(root, header)).read()
        names.update(re.findall(r"PK_API[^;(]*?\b(pk_\w+)\s*\(", text, re.S))
    return names


# ------------------------------------------------------------------ ELF

def check_elf(path: str, machine: str, name: str | None = None, root: str | None = None) -> list[str]:
    """A shipped .so: right machine, LOAD segments 16 KB-aligned, allowed NEEDED, exact exports."""
    lief = _lief()
    name = name or os.path.basename(path)
    elf = lief.ELF.parse(path)
    if elf is None:
        return [f"{name}: not an ELF file"]
    problems = []
    got = str(elf.header.machine_type).split(".")[-1]
    if got != machine:
        problems.append(f"{name}: machine {got}, expected {machine}")
    for seg in elf.segments:
        if str(seg.type).endswith("LOAD") and seg.alignment % PAGE_16K != 0:
            problems.append(f"{name}: LOAD segment at {seg.virtual_address:#x} aligned to {seg.alignment}, "
                            f"not 16 KB (Android 15 needs 16 KB pages)")
    for lib in elf.libraries:
        if lib not in ALLOWED_NEEDED:
            problems.append(f"{name}: NEEDs {lib}, which an app cannot be assumed to have")
    exported = {s.name for s in elf.exported_symbols if s.name}
    base = os.path.basename(name)
    if base == "libpocket_jni.so":
        if exported != {"JNI_OnLoad"}:
            problems.append(f"{name}: exports {sorted(exported)[:8]}, expected exactly JNI_OnLoad")
    elif base == "libpocket.so":
        stray = sorted(s for s in exported if not s.startswith("pk_"))
        if stray:
            problems.append(f"{name}: exports non-API symbols {stray[:8]}")
        if root:
            declared = declared_functions(root)
            missing = sorted(declared - exported)
            extra = sorted(s for s in exported - declared if s.startswith("pk_"))
            if missing:
                problems.append(f"{name}: does not export declared {missing[:8]}")
            if extra:
                problems.append(f"{name}: exports undeclared {extra[:8]}")
    return problems


def exported_symbols(path: str) -> list[str]:
    elf = _lief().ELF.parse(path)  # keep the binary alive while its symbols are read
    return sorted({s.name for s in elf.exported_symbols if s.name})


# ------------------------------------------------------------------ Java / AAR

def class_major_versions(jar_bytes: bytes) -> dict[str, int]:
    versions = {}
    with zipfile.ZipFile(io.BytesIO(jar_bytes)) as zf:
        for n in zf.namelist():
            if n.endswith(".class"):
                head = zf.read(n)[:8]
                versions[n] = int.from_bytes(head[6:8], "big") if head[:4] == b"\xca\xfe\xba\xbe" else -1
    return versions


def jni_lookups(root: str) -> dict[str, set[str]]:
    """Classes (dotted) and the members JNI finds by name, from the JNI sources."""
    found: dict[str, set[str]] = {}
    for path in glob.glob(os.path.join(root, "bindings", "java", "jni", "*.cpp")):
        text = open(path).read()
        classes = dict(re.findall(r'(\w+)\s*=\s*(?:find_class\(env,\s*|env->FindClass\()"(dev/pocket/[\w/$]+)"', text))
        for cls in re.findall(r'"(dev/pocket/[\w/$]+)"', text):
            found.setdefault(cls.replace("/", "."), set())
        for m in re.finditer(r'Get(?:Static)?MethodID\(\s*([\w.]+)\s*,\s*"(\w+)"', text):
            var, member = m.group(1), m.group(2)
            owner = classes.get(var.split(".")[-1])
            for cls in ([owner] if owner else []):
                found.setdefault(cls.replace("/", "."), set()).add(member)
    return found


def check_proguard(rules: str, lookups: dict[str, set[str]]) -> list[str]:
    """Every class JNI looks up is kept, and every member it finds by name is named in its rule."""
    problems = []
    for cls, members in sorted(lookups.items()):
        rule = re.search(r"-keep[^\n]*\b" + re.escape(cls) + r"\b[^\n]*", rules)
        if not rule:
            problems.append(f"proguard.txt: no -keep rule for {cls}, which JNI looks up by name")
            continue
        for member in sorted(members):
            if member not in rule.group(0) and "<methods>" not in rule.group(0):
                problems.append(f"proguard.txt: the rule for {cls} does not keep {member}()")
    return problems


def check_aar(path: str, root: str, abis: dict[str, str], aapt2_framework: str | None = None) -> list[str]:
    """abis: {"arm64-v8a": "AARCH64", ...}."""
    problems = []
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        return [f"{os.path.basename(path)}: not a zip ({e})"]
    names = set(zf.namelist())
    for required in ("AndroidManifest.xml", "classes.jar", "R.txt", "proguard.txt"):
        if required not in names:
            problems.append(f"AAR lacks {required}")
    if "classes.jar" in names:
        versions = class_major_versions(zf.read("classes.jar"))
        if not versions:
            problems.append("classes.jar holds no classes")
        newer = sorted(n for n, v in versions.items() if v != 52)
        if newer:
            problems.append(f"classes.jar: {newer[:3]} are not Java 8 class files (major 52)")
        android = sorted(n for n in versions if n.startswith(("android/", "androidx/")))
        if android:
            problems.append(f"classes.jar contains android classes {android[:3]} (compile-only stubs leaked)")
    if "proguard.txt" in names:
        problems += check_proguard(zf.read("proguard.txt").decode(), jni_lookups(root))
    with tempfile.TemporaryDirectory() as tmp:
        for abi, machine in sorted(abis.items()):
            for lib in ("libpocket.so", "libpocket_jni.so"):
                member = f"jni/{abi}/{lib}"
                if member not in names:
                    problems.append(f"AAR lacks {member}")
                    continue
                out = os.path.join(tmp, f"{abi}-{lib}")
                with open(out, "wb") as f:
                    f.write(zf.read(member))
                problems += check_elf(out, machine, f"{member}", root)
        stray = sorted(n for n in names if n.startswith("jni/") and n.split("/")[1] not in abis)
        if stray:
            problems.append(f"AAR has libraries for unexpected ABIs: {stray[:3]}")
        if "AndroidManifest.xml" in names and aapt2_framework:
            manifest = os.path.join(tmp, "AndroidManifest.xml")
            with open(manifest, "wb") as f:
                f.write(zf.read("AndroidManifest.xml"))
            problems += aapt2_link(manifest, aapt2_framework, tmp)
    return problems


def framework_res() -> str | None:
    """The Android framework resources (Debian's android-framework-res: API 29 framework-res.apk)."""
    for p in ("/usr/share/android-framework-res/framework-res.apk",
              "/usr/lib/android-sdk/platforms/android-29/android.jar"):
        if os.path.exists(p):
            return p
    hits = glob.glob("/usr/share/**/framework-res.apk", recursive=True)
    return hits[0] if hits else None


def aapt2_link(manifest: str, framework: str, tmp: str) -> list[str]:
    """Links the library manifest against the framework as an app build would: aapt2 when
    installed, else Debian's aapt (Debian 12 packages aapt, not aapt2)."""
    out = os.path.join(tmp, "manifest-check.apk")
    if shutil.which("aapt2"):
        cmd = ["aapt2", "link", "--static-lib", "--manifest", manifest, "-I", framework, "-o", out]
    elif shutil.which("aapt"):
        cmd = ["aapt", "package", "-f", "-M", manifest, "-I", framework, "-F", out]
    else:
        return ["neither aapt2 nor aapt found (apt-get install aapt android-framework-res)"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{cmd[0]} rejects AndroidManifest.xml: {(r.stderr or r.stdout).strip()[:500]}"]
    return []


# ------------------------------------------------------------------ Apple

def ar_members(path: str) -> list[tuple[str, bytes]]:
    """The members of a static library (GNU or BSD ar format)."""
    data = open(path, "rb").read()
    if not data.startswith(b"!<arch>\n"):
        raise ValueError(f"{path}: not an ar archive")
    pos, members, long_names = 8, [], b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip()
        size = int(header[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name.startswith("#1/"):  # BSD: the name follows the header
            n = int(name[3:])
            name, body = body[:n].rstrip(b"\0").decode(), body[n:]
            if name.startswith("__.SYMDEF"):
                continue
        elif name == "//":
            long_names = body
            continue
        elif name.startswith("/") and name[1:].isdigit():
            off = int(name[1:])
            name = long_names[off:long_names.index(b"/\n", off)].decode()
        elif name in ("/", "/SYM64/") or name.startswith("__.SYMDEF"):
            continue
        members.append((name.rstrip("/"), body))
    return members


_PLATFORMS = {("ios", ""): "IOS", ("ios", "simulator"): "IOSSIMULATOR", ("macos", ""): "MACOS"}


def check_static_library(path: str, platform: str, variant: str, archs: list[str], root: str) -> list[str]:
    """Every object carries the platform (LC_BUILD_VERSION) and an expected arch; the global pk_*
    symbols equal the headers' declarations."""
    lief = _lief()
    want = _PLATFORMS.get((platform, variant))
    problems, defined = [], set()
    try:
        members = ar_members(path)
    except (OSError, ValueError) as e:
        return [str(e)]
    if not members:
        return [f"{path}: empty archive"]
    arch_names = {"arm64": "ARM64", "x86_64": "X86_64"}
    for name, body in members:
        fat = lief.MachO.parse(list(body))
        if fat is None:
            problems.append(f"{os.path.basename(path)}({name}): not a Mach-O object")
            continue
        for binary in fat:
            cpu = str(binary.header.cpu_type).split(".")[-1]
            if cpu not in {arch_names.get(a, a) for a in archs}:
                problems.append(f"{name}: cpu {cpu}, expected {archs}")
            platforms = {str(c.platform).split(".")[-1] for c in binary.commands if isinstance(c, lief.MachO.BuildVersion)}
            if platforms != {want}:
                problems.append(f"{name}: built for {sorted(platforms) or 'no platform'}, expected {want}")
            for s in binary.symbols:  # defined (N_SECT) and external (N_EXT)
                if s.name.startswith("_pk_") and (s.raw_type & 0x0E) == 0x0E and s.raw_type & 0x01:
                    defined.add(s.name[1:])
    declared = declared_functions(root)
    if declared - defined:
        problems.append(f"{os.path.basename(path)}: lacks declared {sorted(declared - defined)[:8]}")
    if defined - declared:
        problems.append(f"{os.path.basename(path)}: defines undeclared {sorted(defined - declared)[:8]}")
    return problems


def check_xcframework(path: str, root: str) -> list[str]:
    import plistlib

    info = os.path.join(path, "Info.plist")
    if not os.path.isfile(info):
        return [f"{os.path.basename(path)}: no Info.plist"]
    with open(info, "rb") as f:
        plist = plistlib.load(f)
    problems = []
    if plist.get("CFBundlePackageType") != "XFWK":
        problems.append("Info.plist: CFBundlePackageType is not XFWK")
    for lib in plist.get("AvailableLibraries", []):
        folder = os.path.join(path, lib["LibraryIdentifier"])
        headers = os.path.join(folder, lib.get("HeadersPath", "Headers"))
        for h in ("pocket.h", "pocket_llm.h", "module.modulemap"):
            if not os.path.isfile(os.path.join(headers, h)):
                problems.append(f"{lib['LibraryIdentifier']}: Headers lack {h}")
        problems += [f"{lib['LibraryIdentifier']}: {p}" for p in check_static_library(
            os.path.join(folder, lib["LibraryPath"]), lib["SupportedPlatform"],
            lib.get("SupportedPlatformVariant", ""), lib["SupportedArchitectures"], root)]
    if not plist.get("AvailableLibraries"):
        problems.append("Info.plist lists no libraries")
    return problems
