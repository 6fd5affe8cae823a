// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "NotesServer",
    // Hummingbird 2 needs macOS 14; the notes store's `Mutex` needs macOS 15.
    platforms: [.macOS(.v15)],
    products: [
        // The piece to reuse: a child container per request, closed once the response is written.
        .library(name: "ArborHummingbird", targets: ["ArborHummingbird"]),
        .executable(name: "NotesServer", targets: ["NotesServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Arbor itself: this repository, two folders up. A path dependency's identity is the name of its folder,
        // which is whatever a clone was called (`arbor`, `Arbor`, `main`, …); `name:` gives it a fixed name, so
        // the products below say `package: "Arbor"` whatever the folder is called. In your own package, depend
        // on the repository's URL instead, and name its folder's identity in `package:` as usual.
        .package(name: "Arbor", path: "../.."),
    ],
    targets: [
        .target(
            name: "ArborHummingbird",
            dependencies: [
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // The notes API: its services, the routes, and the two ways to wire them (Arbor, or by hand).
        .target(
            name: "NotesApp",
            dependencies: [
                "ArborHummingbird",
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .executableTarget(name: "NotesServer", dependencies: ["NotesApp"]),
        .testTarget(
            name: "NotesServerTests",
            dependencies: [
                "ArborHummingbird",
                "NotesApp",
                .product(name: "Arbor", package: "Arbor"),
                .product(name: "ArborTesting", package: "Arbor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
