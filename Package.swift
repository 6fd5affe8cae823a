// swift-tools-version: 6.1
import PackageDescription

// The integrations (`ArborHummingbird`, `ArborVapor`, `ArborServiceLifecycle`, `ArborTracing`) are products of this
// package, each behind a package trait of its own, off by default. A package that depends on Arbor without enabling a
// trait fetches and builds none of the packages they need; one that enables it writes, for example:
//
//     .package(url: "https://github.com/…/Arbor", from: "…", traits: ["Vapor"])
//
// A Swift 6.0 toolchain, which has no traits, reads `Package@swift-6.0.swift` instead: the core products only.
let package = Package(
    name: "Arbor",
    // The floor is Swift concurrency's: `Container.current` is a task-local, and `async` resolves, cancellation and
    // main-actor factories use tasks, continuations and `MainActor` (all macOS 10.15, iOS 13, tvOS 13, watchOS 6 in
    // the toolchain's `_Concurrency` interface). `ArborTesting`'s Swift Testing helpers have the same floor.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .macCatalyst(.v13), .visionOS(.v1)],
    products: [
        .library(name: "Arbor", targets: ["Arbor"]),
        .library(name: "ArborTesting", targets: ["ArborTesting"]),
        // Each is empty unless its trait is enabled.
        .library(name: "ArborHummingbird", targets: ["ArborHummingbird"]),
        .library(name: "ArborVapor", targets: ["ArborVapor"]),
        .library(name: "ArborServiceLifecycle", targets: ["ArborServiceLifecycle"]),
        .library(name: "ArborTracing", targets: ["ArborTracing"]),
    ],
    traits: [
        .trait(
            name: "Hummingbird",
            description: "ArborHummingbird: a child container per request for Hummingbird 2 (needs hummingbird)."),
        .trait(
            name: "Vapor",
            description: "ArborVapor: a child container per request for Vapor 4, `req.container` (needs vapor)."),
        .trait(
            name: "ServiceLifecycle",
            description: "ArborServiceLifecycle: a container that closes on graceful shutdown, as a `Service` of a "
                + "`ServiceGroup` (needs swift-service-lifecycle)."),
        .trait(
            name: "Tracing",
            description: "ArborTracing: a trace span for each resolve and each slow factory, nested in the caller's "
                + "span (needs swift-distributed-tracing)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // Each is used only under its trait: without the trait, SwiftPM neither fetches nor builds it.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .target(name: "CArborSupport"),
        // The unsafe building blocks (locks, atomics, manual memory, the registration table), with `package` access:
        // not a product. To check their invariants as they run, build with the condition ARBOR_INTERNAL_CHECKS, in a
        // build directory of its own: `swift test -Xswiftc -DARBOR_INTERNAL_CHECKS --scratch-path .build-checks`.
        .target(name: "ArborPrimitives", dependencies: ["CArborSupport"]),
        .target(name: "Arbor", dependencies: ["ArborPrimitives"]),
        .target(name: "ArborTesting", dependencies: ["Arbor"]),
        .target(
            name: "ArborHummingbird",
            dependencies: [
                "Arbor",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
            ]
        ),
        .target(
            name: "ArborVapor",
            dependencies: [
                "Arbor",
                "ArborPrimitives",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
            ]
        ),
        .target(
            name: "ArborServiceLifecycle",
            dependencies: [
                "Arbor",
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        .target(
            name: "ArborTracing",
            dependencies: [
                "Arbor",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        // `Examples/NotesServer` is a package of its own (it serves the notes API on Hummingbird and on Vapor); this
        // target skips it.
        .executableTarget(name: "Examples", dependencies: ["Arbor"], path: "Examples", exclude: ["NotesServer"]),
        // What the test targets share (a seedable generator, threads that start together): not a product.
        .target(name: "ArborTestSupport", path: "Tests/ArborTestSupport"),
        .testTarget(name: "ArborTests", dependencies: ["Arbor", "ArborTesting", "ArborTestSupport"]),
        .testTarget(name: "ArborTestingTests", dependencies: ["Arbor", "ArborTesting"]),
        .testTarget(name: "ArborPrimitivesTests", dependencies: ["ArborPrimitives", "ArborTestSupport"]),
        // The integrations' tests: each runs with its trait enabled (`swift test --traits Vapor`), and is empty
        // without it.
        .testTarget(
            name: "ArborHummingbirdTests",
            dependencies: [
                "ArborHummingbird", "Arbor", "ArborTesting", "ArborTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(
                    name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                // With the trait Tracing too, the setup that traces a request's resolves is tested here.
                .target(name: "ArborTracing", condition: .when(traits: ["Tracing"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(
                    name: "InMemoryTracing", package: "swift-distributed-tracing",
                    condition: .when(traits: ["Tracing"])),
                // With the trait ServiceLifecycle too, the article's servers with a `ContainerService` are compiled.
                .target(name: "ArborServiceLifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        .testTarget(
            name: "ArborVaporTests",
            dependencies: [
                "ArborVapor", "Arbor", "ArborTesting", "ArborTestSupport",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "VaporTesting", package: "vapor", condition: .when(traits: ["Vapor"])),
            ]
        ),
        .testTarget(
            name: "ArborServiceLifecycleTests",
            dependencies: [
                "ArborServiceLifecycle", "Arbor", "ArborTesting",
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])),
                .product(
                    name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        .testTarget(
            name: "ArborTracingTests",
            dependencies: [
                "ArborTracing", "Arbor", "ArborTestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(
                    name: "InMemoryTracing", package: "swift-distributed-tracing",
                    condition: .when(traits: ["Tracing"])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
