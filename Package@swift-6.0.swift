// swift-tools-version: 6.0
import PackageDescription

// The manifest a Swift 6.0 toolchain reads: the core products only. Swift 6.1 and later read `Package.swift`,
// which adds the server integrations (`ArborHummingbird`, …) behind package traits, which need tools version
// 6.1. Keep the two in step: the same core targets, settings and platforms.

let package = Package(
    name: "Arbor",
    // The floor is Swift concurrency's: `Container.current` is a task-local, and `async` resolves, cancellation and
    // main-actor factories use tasks, continuations and `MainActor` (all macOS 10.15, iOS 13, tvOS 13, watchOS 6 in
    // the toolchain's `_Concurrency` interface). `ArborTesting`'s Swift Testing helpers have the same floor.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .macCatalyst(.v13), .visionOS(.v1)],
    products: [
        .library(name: "Arbor", targets: ["Arbor"]),
        .library(name: "ArborTesting", targets: ["ArborTesting"]),
    ],
    targets: [
        .target(name: "CArborSupport"),
        // The unsafe building blocks (locks, atomics, manual memory, the registration table), with `package` access:
        // not a product. To check their invariants as they run, build with the condition ARBOR_INTERNAL_CHECKS, in a
        // build directory of its own: `swift test -Xswiftc -DARBOR_INTERNAL_CHECKS --scratch-path .build-checks`.
        .target(name: "ArborPrimitives", dependencies: ["CArborSupport"]),
        .target(name: "Arbor", dependencies: ["CArborSupport", "ArborPrimitives"]),
        .target(name: "ArborTesting", dependencies: ["Arbor"]),
        // `Examples/NotesServer` is a package of its own (it serves the notes API on Hummingbird and on Vapor); this
        // target skips it.
        .executableTarget(name: "Examples", dependencies: ["Arbor"], path: "Examples", exclude: ["NotesServer"]),
        // What the test targets share (a seedable generator, threads that start together): not a product.
        .target(name: "ArborTestSupport", path: "Tests/ArborTestSupport"),
        .testTarget(name: "ArborTests", dependencies: ["Arbor", "ArborTesting", "ArborTestSupport"]),
        .testTarget(name: "ArborTestingTests", dependencies: ["Arbor", "ArborTesting"]),
        .testTarget(name: "ArborPrimitivesTests", dependencies: ["ArborPrimitives", "ArborTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
