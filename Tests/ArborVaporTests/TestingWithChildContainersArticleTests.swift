#if Vapor
import Arbor
import ArborTesting
import ArborVapor
import Testing
import Vapor
import VaporTesting

// The Vapor server test of the article "Testing with child containers and leak checks"
// (Sources/ArborTesting/ArborTesting.docc/TestingWithChildContainers.md), compiled and run: it is copied between
// `// ARTICLE: <section>` and `// ARTICLE end`, and ArborTests' TestingWithChildContainersArticleTests checks that the
// copy and the article agree.

private enum AppContainer {
    /// The app's container, shared by the tests as an app's would be.
    static let shared = make()

    static func make() -> Container {
        let container = Container()
        container.register(String.self, name: "greeting") { _ in "Hello" }
        return container
    }
}

@Suite struct TestingWithChildContainersArticleTests {
    // ARTICLE: Give each test a child container (Swift Testing)
    @Test func greets() async throws {
        try await withApp { app in
            app.useRequestContainers(root: ArborTesting.overriding(AppContainer.shared))  // closed at shutdown
            // … routes, requests …
        }
    }
    // ARTICLE end

    @Test func theSharedContainerStaysOpenForTheNextTest() async throws {
        try await greets()
        try await greets()
        #expect(!AppContainer.shared.isClosed)
        #expect(try await AppContainer.shared.resolve(String.self, name: "greeting") == "Hello")
    }

    /// Why the test gives the app a child: the app ends the root it was given when it shuts down.
    @Test func theAppClosesTheRootItIsGiven() async throws {
        let root = AppContainer.make()
        try await withApp { app in
            app.useRequestContainers(root: root)
        }
        #expect(root.isClosed)
    }
}
#endif
