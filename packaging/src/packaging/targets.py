"""The targets `pocket package` builds, the CMake preset of each, and what each needs.

A target is built by its `ship-*` preset with the real toolchain (Android: the NDK; Apple: Xcode
on macOS). Without that toolchain it is an error naming the variable or tool to set, unless
`--standin` is given: then a stand-in that this machine can build takes its place (Linux ELF
libraries for Android, zig-compiled slices for Apple). Stand-ins prove the packaging and the
code's portability; they are marked in their file names and in the manifest and never published.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass

from .errors import PackageError


@dataclass(frozen=True)
class Target:
    name: str            # "android-arm64-v8a"
    family: str          # "android" | "apple" | "linux"
    preset: str          # the real build
    standin_preset: str  # the stand-in build ("" when none is needed)
    abi: str = ""        # Android ABI folder in the AAR
    elf_machine: str = ""  # ELF e_machine name of its libraries: "AARCH64" | "X86_64"
    # Apple: XCFramework library identifier and Info.plist fields
    platform: str = ""   # "ios" | "macos"
    variant: str = ""    # "" | "simulator"
    archs: tuple = ()


TARGETS = {t.name: t for t in [
    Target("linux-x86_64", "linux", "ship-linux-x86_64", "", elf_machine="X86_64"),
    Target("linux-aarch64", "linux", "ship-linux-aarch64", "", elf_machine="AARCH64"),
    Target("android-arm64-v8a", "android", "ship-android-arm64-v8a", "ship-linux-aarch64",
           abi="arm64-v8a", elf_machine="AARCH64"),
    Target("android-x86_64", "android", "ship-android-x86_64", "ship-linux-x86_64",
           abi="x86_64", elf_machine="X86_64"),
    Target("ios-arm64", "apple", "ship-ios-arm64", "standin-ios-arm64",
           platform="ios", archs=("arm64",)),
    Target("ios-simulator", "apple", "ship-ios-simulator", "standin-ios-simulator-arm64",
           platform="ios", variant="simulator", archs=("arm64", "x86_64")),
    Target("macos", "apple", "ship-macos", "standin-macos-arm64", platform="macos", archs=("arm64", "x86_64")),
]}

# --targets accepts target names and these groups.
GROUPS = {
    "android": ["android-arm64-v8a", "android-x86_64"],
    "ios": ["ios-arm64", "ios-simulator"],
    "macos": ["macos"],
    "apple": ["ios-arm64", "ios-simulator", "macos"],
    "linux": ["linux-x86_64", "linux-aarch64"],
}
EXTRA = ("wheel",)  # not native targets, but selectable with --targets


def expand(spec: str) -> list[str]:
    """'android,ios,wheel' -> target names (in TARGETS order) plus extras."""
    names: list[str] = []
    for word in (w.strip() for w in spec.split(",")):
        if not word:
            continue
        if word in GROUPS:
            names += GROUPS[word]
        elif word in TARGETS or word in EXTRA:
            names.append(word)
        else:
            known = sorted(GROUPS) + sorted(TARGETS) + list(EXTRA)
            raise PackageError(f"unknown target {word!r}; known: {', '.join(known)}")
    order = list(TARGETS) + list(EXTRA)
    return sorted(set(names), key=order.index)


def ndk_path(ndk: str | None) -> str | None:
    """The NDK folder: --ndk, else ANDROID_NDK, ANDROID_NDK_HOME or ANDROID_NDK_ROOT."""
    for value in (ndk, os.environ.get("ANDROID_NDK"), os.environ.get("ANDROID_NDK_HOME"),
                  os.environ.get("ANDROID_NDK_ROOT")):
        if value:
            return value
    return None


def has_xcode() -> bool:
    return sys.platform == "darwin" and shutil.which("xcodebuild") is not None


def has_cross_aarch64() -> bool:
    return shutil.which("aarch64-linux-gnu-g++") is not None


def has_zig() -> bool:
    try:
        import ziglang  # noqa: F401
    except ImportError:
        return False
    return True


def on_linux_x86_64() -> bool:
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def default_targets() -> list[str]:
    """Every target this machine can build for real (plus the wheel)."""
    names = []
    if on_linux_x86_64():
        names.append("linux-x86_64")
        if has_cross_aarch64():
            names.append("linux-aarch64")
    if ndk_path(None):
        names += GROUPS["android"]
    if has_xcode():
        names += GROUPS["apple"]
    return names + ["wheel"]


def plan(target: Target, ndk: str | None, standin: bool) -> tuple[str, bool]:
    """(preset, is_standin) for building `target` here, or PackageError saying what to set."""
    if target.family == "linux":
        if not on_linux_x86_64():
            raise PackageError(f"{target.name}: the ship-* Linux presets build on a Linux x86_64 host")
        if target.name == "linux-aarch64" and not has_cross_aarch64():
            raise PackageError("linux-aarch64: aarch64-linux-gnu-g++ not found "
                               "(apt-get install g++-aarch64-linux-gnu)")
        return target.preset, False
    if target.family == "android":
        path = ndk_path(ndk)
        if path:
            if not os.path.isfile(os.path.join(path, "build", "cmake", "android.toolchain.cmake")):
                raise PackageError(f"{target.name}: {path} is not an Android NDK "
                                   "(no build/cmake/android.toolchain.cmake)")
            return target.preset, False
        if not standin:
            raise PackageError(f"{target.name}: no Android NDK. Pass --ndk DIR or set ANDROID_NDK "
                               "(or ANDROID_NDK_HOME); --standin builds test-only Linux stand-ins instead")
        if target.elf_machine == "AARCH64" and not has_cross_aarch64():
            raise PackageError(f"{target.name} stand-in: aarch64-linux-gnu-g++ not found "
                               "(apt-get install g++-aarch64-linux-gnu)")
        return target.standin_preset, True
    if has_xcode():
        return target.preset, False
    if not standin:
        raise PackageError(f"{target.name}: needs Xcode (xcodebuild on macOS). --standin builds "
                           "test-only zig slices instead (pip install ziglang)")
    if not has_zig():
        raise PackageError(f"{target.name} stand-in: the ziglang package is missing (pip install ziglang)")
    return target.standin_preset, True


def git_commit(root: str) -> str:
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
