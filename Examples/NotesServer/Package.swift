// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NotesServer",
    // Hummingbird 2 needs macOS 14.
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "NotesServer", targets: ["NotesServer"])
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // Arbor itself: this repository, two folders up, with the traits of the integrations this server uses. A
        // path dependency's identity is the name of its folder, which is whatever a clone was called (`arbor`,
        // `Arbor`, `main`, …); `name:` gives it a fixed name, so the products below say `package: "Arbor"` whatever
        // the folder is called. In your own package, depend on the repository's URL instead:
        // `.package(url: "https://github.com/…/Arbor", from: "…", traits: ["Vapor"])`.
        .package(name: "Arbor", path: "../..", traits: ["Hummingbird", "Vapor", "ServiceLifecycle"]),
    ],
    targets: [
        // The notes services, and the two ways to wire them (Arbor, or by hand): no web framework.
        .target(
            name: "NotesCore",
            dependencies: [
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The notes API on Hummingbird.
        .target(
            name: "NotesHummingbird",
            dependencies: [
                "NotesCore",
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "ArborHummingbird", package: "Arbor"),
                .product(name: "ArborServiceLifecycle", package: "Arbor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The same API on Vapor.
        .target(
            name: "NotesVapor",
            dependencies: [
                "NotesCore",
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "ArborVapor", package: "Arbor"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .executableTarget(
            name: "NotesServer",
            dependencies: [
                "NotesCore", "NotesHummingbird", "NotesVapor",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .testTarget(
            name: "NotesServerTests",
            dependencies: [
                "NotesCore", "NotesHummingbird", "NotesVapor",
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "ArborTesting", package: "Arbor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
