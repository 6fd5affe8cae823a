// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Arbor",
    products: [
        .library(name: "Arbor", targets: ["Arbor"]),
        .library(name: "ArborTesting", targets: ["ArborTesting"]),
    ],
    targets: [
        .target(name: "CArborSupport"),
        .target(name: "Arbor", dependencies: ["CArborSupport"]),
        .target(name: "ArborTesting", dependencies: ["Arbor"]),
        .executableTarget(name: "Examples", dependencies: ["Arbor"], path: "Examples"),
        .testTarget(name: "ArborTests", dependencies: ["Arbor", "ArborTesting"]),
        .testTarget(name: "ArborTestingTests", dependencies: ["Arbor", "ArborTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
