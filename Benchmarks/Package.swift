// swift-tools-version: 6.0

// Benchmarks for Arbor, kept in their own package so that the library itself has no
// dependencies. Run from the repository root:
//
//     swift run -c release --package-path Benchmarks                                # full run, ~1 minute
//     swift run -c release --package-path Benchmarks ArborBenchmarks --quick        # CI smoke run, seconds
//     swift run -c release --package-path Benchmarks ArborBenchmarks --filter graph
//
// (Arguments for the benchmark need the product name first, or `swift run` takes them as its own.)

import PackageDescription

let package = Package(
    name: "ArborBenchmarks",
    // Arbor's own floor (see its Package.swift).
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .macCatalyst(.v13), .visionOS(.v1)],
    dependencies: [
        .package(name: "Arbor", path: ".."),
        .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
    ],
    targets: [
        // Reads the allocator's statistics (bytes in use), for the heap bytes a child container takes.
        .target(name: "CHeapStatistics"),
        .executableTarget(
            name: "ArborBenchmarks",
            dependencies: [
                "CHeapStatistics",
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "Swinject", package: "Swinject"),
            ]
        ),
        // ArborTests' stack suite, in the release build the benchmarks use (its file is a symbolic link to
        // Tests/ArborTests/StackDepthTests.swift): a level of a resolve takes about 1 KB of stack there, several times
        // that in debug. Building it here reuses the benchmarks' release build of Arbor (without testable imports,
        // or SwiftPM compiles Arbor again); building the library's own tests in release took CI 6 min.
        //
        //     swift test -c release --package-path Benchmarks --disable-testable-imports
        .testTarget(
            name: "ReleaseStackTests",
            dependencies: [.product(name: "Arbor", package: "Arbor")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
