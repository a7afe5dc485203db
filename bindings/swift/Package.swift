// swift-tools-version:5.9
// Pocket for Swift: the `Pocket` module (Module, Tensor, TextRunner) over the C API in
// pocket.h / pocket_llm.h, exposed to Swift as the clang module `CPocket`.
//
//   bindings/swift/test.sh                      # builds libpocket with CMake, then swift build/test
//   swift build --package-path bindings/swift   # after libpocket exists in build/swift
//
// SwiftPM never compiles the runtime (STYLE.md: one build system per language): CMake builds
// libpocket, and this package links it.
import PackageDescription

// ---- The one seam between the library built from source and the prebuilt release. ---------
//
// Source (default): CPocket links the shared libpocket that CMake built. Its folder comes from
// POCKET_LIB_DIR, or is <repo>/build/swift (where bindings/swift/test.sh builds it); an rpath
// to it is set so tests and the pocket-chat demo run in place.
//
// Binary (release packaging): POCKET_XCFRAMEWORK names Pocket.xcframework (a path inside this
// package, e.g. "Frameworks/Pocket.xcframework"), which holds libpocket (static) for each
// Apple platform. It becomes the binary target `PocketFFI` that CPocket depends on, and no
// linker flags are added. The released Package.swift that packaging/ writes fixes this
// choice and uses `.binaryTarget(name: "PocketFFI", url: ..., checksum: ...)` instead.
//
// CPocket itself (the headers and module map in Sources/CPocket/include) is the same in both
// cases, so `import CPocket` and the whole Pocket module do not change. The XCFramework must
// not carry a module map of its own named CPocket.
let env = Context.environment
let xcframeworkPath = env["POCKET_XCFRAMEWORK"].flatMap { $0.isEmpty ? nil : $0 }
let libDir = env["POCKET_LIB_DIR"].flatMap { $0.isEmpty ? nil : $0 }
  ?? Context.packageDirectory + "/../../build/swift"

let ffiTargets: [Target]
let cpocketDependencies: [Target.Dependency]
let cpocketLinkerSettings: [LinkerSetting]
if let xcframeworkPath {
  ffiTargets = [.binaryTarget(name: "PocketFFI", path: xcframeworkPath)]
  cpocketDependencies = ["PocketFFI"]
  cpocketLinkerSettings = [.linkedLibrary("c++")]  // libpocket.a is C++ inside
} else {
  ffiTargets = []
  cpocketDependencies = []
  cpocketLinkerSettings = [
    .linkedLibrary("pocket"),
    .unsafeFlags(["-L" + libDir, "-Xlinker", "-rpath", "-Xlinker", libDir]),
  ]
}
// ---------------------------------------------------------------------------------------------

let package = Package(
  name: "Pocket",
  // Float16 needs iOS 14 / macOS 11; Swift concurrency runs natively from iOS 15 / macOS 12.
  platforms: [.iOS(.v15), .macOS(.v12)],
  products: [
    .library(name: "Pocket", targets: ["Pocket"]),
    .executable(name: "pocket-chat", targets: ["PocketChat"]),
  ],
  targets: ffiTargets + [
    // Headers only (symlinks to the repo's pocket.h and pocket_llm.h) plus an empty C file,
    // because SwiftPM needs one source file in a C target.
    .target(
      name: "CPocket",
      dependencies: cpocketDependencies,
      linkerSettings: cpocketLinkerSettings),
    .target(name: "Pocket", dependencies: ["CPocket"],
            swiftSettings: [.enableUpcomingFeature("StrictConcurrency")]),
    // The terminal chat demo; its source lives in demo_apps/cli/swift (symlinked here).
    .executableTarget(name: "PocketChat", dependencies: ["Pocket"]),
    .testTarget(name: "PocketTests", dependencies: ["Pocket"]),
    // The iOS chat app's logic without UI (ChatSession, ModelFiles): sources in
    // demo_apps/ios/ChatCore, tests in demo_apps/ios/ChatCoreTests (both symlinked here), so
    // `swift test` covers them on Linux. Not a product: the app compiles the same files itself.
    .target(name: "PocketChatCore", dependencies: ["Pocket"]),
    .testTarget(name: "PocketChatCoreTests", dependencies: ["PocketChatCore"]),
  ]
)
