import Arbor
import Foundation
import Testing

// The Swift snippets of the article "Migrating from Swinject" (Sources/Arbor/Arbor.docc/MigratingFromSwinject.md),
// compiled and run, like the README's (ReadmeTests.swift): each is copied between `// ARTICLE: <section>` and
// `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks that the copies and the article agree. The
// article's Swinject code, shown for comparison in blocks that start with `// Swinject`, is not copied: Swinject is not
// a dependency of the tests.

private enum MigratingFromSwinjectArticle {
    protocol HTTPClient: AnyObject, Sendable {}
    final class LiveClient: HTTPClient {}
    final class StubClient: HTTPClient {}
    final class FeedModel: Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }
    final class ForecastCache: Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }
    final class Model: Sendable {}
    final class Screen: Sendable {
        let model: Model
        init(model: Model) { self.model = model }
    }
    /// A screen and the model it shows, built in one resolution.
    final class Page: Sendable {
        let screen: Screen
        let model: Model
        init(screen: Screen, model: Model) {
            self.screen = screen
            self.model = model
        }
    }

    static func pageContainer() -> Container {
        let container = Container()
        container.register(Model.self) { _ in Model() }
        container.register(Page.self) { r in Page(screen: try r.resolve(), model: try r.resolve()) }
        return container
    }

    @Suite struct Tests {
        @Test func resolveThrowsInsteadOfReturningNil() throws {
            let container = Container()
            container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
            // ARTICLE: resolve throws instead of returning nil
            // Arbor
            container.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
            let model = try container.resolve(FeedModel.self)
            // ARTICLE end

            #expect(model.client === (try container.resolve(HTTPClient.self)))

            let withoutClient = Container()
            withoutClient.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
            let error = #expect(throws: ResolutionError.self) { try withoutClient.resolve(FeedModel.self) }
            guard case .notRegistered = error?.reason else {
                Issue.record("expected .notRegistered, got \(String(describing: error?.reason))")
                return
            }
            #expect(error?.key == ServiceKey(HTTPClient.self))
            #expect(error?.path == [ServiceKey(FeedModel.self), ServiceKey(HTTPClient.self)])
            #expect(try withoutClient.resolve(HTTPClient?.self) == nil, "X? is nil when X has no registration")
        }

        @Test func permanentInstancesBelongToTheRegisteringContainer() throws {
            // ARTICLE: Permanent instances belong to the registering container
            let app = Container()
            app.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
            app.register(ForecastCache.self) { r in ForecastCache(client: try r.resolve()) }.inObjectScope(.permanent)

            let test = app.makeChild()
            test.register(HTTPClient.self) { _ in StubClient() }

            let cache = try test.resolve(ForecastCache.self)
            // Swinject: cache.client is the StubClient, and app shares this cache from now on.
            // Arbor:    cache.client is app's LiveClient; app's cache is untouched by the test.
            // ARTICLE end

            #expect(cache.client is LiveClient)
            #expect(cache.client === (try app.resolve(HTTPClient.self)))
            #expect(try app.resolve(ForecastCache.self) === cache)
            #expect(try test.resolve(HTTPClient.self) is StubClient, "the test's own resolves see its override")
        }

        @Test func resolveThroughTheResolverYouAreGiven() throws {
            let container = pageContainer()
            // ARTICLE: Resolve through the resolver you are given
            // Shares nothing with the graph being built:
            container.register(Screen.self) { _ in Screen(model: try container.resolve(Model.self)) }
            // Joins it:
            container.register(Screen.self) { r in Screen(model: try r.resolve(Model.self)) }
            // ARTICLE end

            let page = try container.resolve(Page.self)
            #expect(page.screen.model === page.model, "the factory's resolver joins the graph being built")
        }

        /// The article's first registration, on its own.
        @Test func aFactoryThatResolvesFromTheContainerSharesNothingWithTheGraph() throws {
            let container = pageContainer()
            container.register(Screen.self) { _ in Screen(model: try container.resolve(Model.self)) }

            let page = try container.resolve(Page.self)
            #expect(page.screen.model !== page.model, "a separate top-level resolution with its own graph")
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/MigratingFromSwinject.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath), leavingOut: ["// Swinject"])
