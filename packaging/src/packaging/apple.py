"""Apple artifacts: the XCFramework, its zip and SwiftPM checksum, and the binary Swift package.

    dist/PocketFFI.xcframework/        Info.plist; <library id>/libpocket.a + Headers/ (pocket.h,
                                       pocket_llm.h, module.modulemap: the C API as module CPocket)
    dist/PocketFFI.xcframework.zip     what a release uploads; checksum = sha256 of the zip
                                       (`swift package compute-checksum`)
    dist/swift/                        Package.swift (binaryTarget + the Swift `Pocket` target) and
                                       Sources/Pocket; `.package(path: "dist/swift")`

The binary target is named PocketFFI because SwiftPM requires a downloaded archive to hold an
artifact named like its target, and `Pocket` is the Swift module's name. Stand-in slices (zig)
make the framework `PocketFFI-standin`, a name no release uses.

For Linux, `artifact_bundle` writes the same static library as a SwiftPM artifact bundle, so the
binary-target path of the Swift package is built and tested here.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import shutil
import subprocess
import zipfile

from .errors import PackageError
from .render import render

FRAMEWORK = "PocketFFI"
MODULEMAP = """// The C API of Pocket (pocket.h, pocket_llm.h) as the clang module CPocket.
module CPocket {
  header "pocket.h"
  header "pocket_llm.h"
  export *
}
"""


def _headers(root, dest):
    os.makedirs(dest, exist_ok=True)
    shutil.copyfile(os.path.join(root, "runtime_core", "include", "pocket", "pocket.h"), os.path.join(dest, "pocket.h"))
    shutil.copyfile(os.path.join(root, "llm_runner", "include", "pocket", "pocket_llm.h"),
                    os.path.join(dest, "pocket_llm.h"))
    with open(os.path.join(dest, "module.modulemap"), "w") as f:
        f.write(MODULEMAP)
    # pocket_llm.h includes "pocket/pocket.h": keep that path working inside Headers/ too.
    with open(os.path.join(dest, "pocket_llm.h")) as f:
        text = f.read()
    with open(os.path.join(dest, "pocket_llm.h"), "w") as f:
        f.write(text.replace('#include "pocket/pocket.h"', '#include "pocket.h"'))


def write_xcframework(root: str, out: str, builds: list) -> str:
    """builds: NativeBuild of apple targets (with .target_info set to the Target)."""
    standin = any(b.standin for b in builds)
    name = FRAMEWORK + ("-standin" if standin else "")
    path = os.path.join(out, f"{name}.xcframework")
    shutil.rmtree(path, ignore_errors=True)
    libraries = []
    for b in builds:
        t = b.target_info
        archs = list(t.archs) if not b.standin else [a for a in t.archs if a == "arm64"]
        ident = f"{t.platform}-{'_'.join(archs)}" + (f"-{t.variant}" if t.variant else "")
        folder = os.path.join(path, ident)
        os.makedirs(folder)
        shutil.copyfile(b.libs["libpocket.a"], os.path.join(folder, "libpocket.a"))
        _headers(root, os.path.join(folder, "Headers"))
        entry = {"LibraryIdentifier": ident, "LibraryPath": "libpocket.a", "HeadersPath": "Headers",
                 "SupportedArchitectures": archs, "SupportedPlatform": t.platform}
        if t.variant:
            entry["SupportedPlatformVariant"] = t.variant
        libraries.append(entry)
    with open(os.path.join(path, "Info.plist"), "wb") as f:
        plistlib.dump({"AvailableLibraries": libraries, "CFBundlePackageType": "XFWK",
                       "XCFrameworkFormatVersion": "1.0"}, f)
    return path


def zip_dir(folder: str, zip_path: str) -> str:
    """A reproducible zip of `folder` (the folder itself at the top), as SwiftPM downloads it."""
    base = os.path.dirname(folder)
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for dirpath, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(dirpath, name)
                info = zipfile.ZipInfo(os.path.relpath(full, base), date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(full, "rb") as f:
                    zf.writestr(info, f.read())
    return zip_path


def checksum(path: str) -> str:
    """SwiftPM's checksum of a binary artifact: sha256 of the file."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def swift_sources(root: str, dest: str, tests: bool = False) -> None:
    src = os.path.join(root, "bindings", "swift")
    shutil.copytree(os.path.join(src, "Sources", "Pocket"), os.path.join(dest, "Sources", "Pocket"))
    if tests:
        shutil.copytree(os.path.join(src, "Tests", "PocketTests"), os.path.join(dest, "Tests", "PocketTests"),
                        ignore=shutil.ignore_patterns("ChatCLITests.swift"))  # needs the pocket-chat demo


def write_swift_package(root: str, out: str, version: str, framework_dir: str, zip_path: str,
                        url: str | None, standin: bool) -> str:
    """dist/swift: Package.swift + Sources/Pocket + the XCFramework (for use by path)."""
    dest = os.path.join(out, "swift")
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    swift_sources(root, dest)
    framework_name = os.path.basename(framework_dir)
    shutil.copytree(framework_dir, os.path.join(dest, framework_name))
    text = render("Package.swift.j2", version=version, framework=framework_name[:-len(".xcframework")],
                  url=url, checksum=checksum(zip_path), binary_path=framework_name, standin=standin,
                  tests=False)
    with open(os.path.join(dest, "Package.swift"), "w") as f:
        f.write(text)
    return dest


def artifact_bundle(root: str, dest: str, name: str, libs_by_triple: dict, version: str) -> str:
    """A SwiftPM static-library artifact bundle (Linux): <dest>/<name>.artifactbundle."""
    import json

    bundle = os.path.join(dest, f"{name}.artifactbundle")
    shutil.rmtree(bundle, ignore_errors=True)
    variants = []
    for triple, lib in sorted(libs_by_triple.items()):
        folder = os.path.join(bundle, triple)
        os.makedirs(folder)
        shutil.copyfile(lib, os.path.join(folder, "libpocket.a"))
        _headers(root, os.path.join(folder, "include"))
        variants.append({"path": f"{triple}/libpocket.a", "supportedTriples": [triple],
                         "staticLibraryMetadata": {"headerPaths": [f"{triple}/include"],
                                                   "moduleMapPath": f"{triple}/include/module.modulemap"}})
    with open(os.path.join(bundle, "info.json"), "w") as f:
        json.dump({"schemaVersion": "1.0",
                   "artifacts": {name: {"type": "staticLibrary", "version": version, "variants": variants}}}, f,
                  indent=2)
    return bundle


def xcodebuild_xcframework(out: str, builds: list) -> str:
    """On macOS with Xcode: the same framework through `xcodebuild -create-xcframework`."""
    path = os.path.join(out, f"{FRAMEWORK}.xcframework")
    shutil.rmtree(path, ignore_errors=True)
    args = ["xcodebuild", "-create-xcframework"]
    for b in builds:
        headers = os.path.join(b.build_dir, "ship", "Headers")
        args += ["-library", b.libs["libpocket.a"], "-headers", headers]
    r = subprocess.run(args + ["-output", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise PackageError(f"xcodebuild -create-xcframework failed:\n{r.stderr[-3000:]}")
    return path
