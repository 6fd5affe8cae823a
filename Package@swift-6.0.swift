// swift-tools-version: 6.0
import PackageDescription

// The manifest a Swift 6.0 toolchain reads: the core products only. Swift 6.1 and later read `Package.swift`,
// which adds the server integrations (`ArborHummingbird`, …) behind package traits, which need tools version
// 6.1. Keep the two in step: the same core targets, settings and platforms; the comments are in `Package.swift`.

let package = Package(
    name: "Arbor",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .macCatalyst(.v13), .visionOS(.v1)],
    products: [
        .library(name: "Arbor", targets: ["Arbor"]),
        .library(name: "ArborTesting", targets: ["ArborTesting"]),
    ],
    targets: [
        .target(name: "CArborSupport"),
        .target(name: "ArborPrimitives", dependencies: ["CArborSupport"]),
        .target(name: "Arbor", dependencies: ["ArborPrimitives"]),
        .target(name: "ArborTesting", dependencies: ["Arbor"]),
        .executableTarget(name: "Examples", dependencies: ["Arbor"], path: "Examples", exclude: ["NotesServer"]),
        .target(name: "ArborTestSupport", path: "Tests/ArborTestSupport"),
        .testTarget(name: "ArborTests", dependencies: ["Arbor", "ArborTesting", "ArborTestSupport"]),
        .testTarget(name: "ArborTestingTests", dependencies: ["Arbor", "ArborTesting"]),
        .testTarget(name: "ArborPrimitivesTests", dependencies: ["ArborPrimitives", "ArborTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
