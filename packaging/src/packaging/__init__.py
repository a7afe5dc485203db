"""`pocket package`: from .pocket programs to what an app adds in one line.

    pocket package --out dist/                                   # full runtime, every target here
    pocket package smol.pocket net.pocket --out dist/            # selective: only these programs' ops
    pocket package --targets android --ndk $ANDROID_NDK_HOME --out dist/
    pocket package --targets android,ios --standin --out dist/   # test-only stand-ins, no NDK/Xcode
    pocket package --app android smol.pocket --out SmolChat/     # a Gradle chat app, model bundled

Stages, one file each: targets (what can be built here and with which CMake preset), selective
(the kernel table of a set of programs), native (CMake builds, stripped libraries), android (AAR,
jars, the Maven repository), apple (XCFramework, Swift package), wheel, manifest, checks (the
verifications the tests and the release workflow run on every artifact).

This folder is the import package `pocket.packaging` (never a top-level `packaging`, which would
shadow the library pip uses).
"""

from .errors import PackageError
from .build import package, package_app

__all__ = ["PackageError", "package", "package_app"]
