import Arbor

/// A small news app: a permanent network client and store, a graph-scoped feed screen whose presenter and view
/// point at each other, and a child container that swaps the network client the way a test would.
enum NewsApp {
    // MARK: The app's types

    protocol NetworkClient: AnyObject, Sendable {
        func fetchHeadlines() -> [String]
    }

    final class LiveNetworkClient: NetworkClient {
        func fetchHeadlines() -> [String] { ["Swift 7 announced", "Local team wins"] }
    }

    final class StubNetworkClient: NetworkClient {
        func fetchHeadlines() -> [String] { ["(stub) headline"] }
    }

    final class HeadlineStore: @unchecked Sendable {
        let client: any NetworkClient
        init(client: any NetworkClient) { self.client = client }
    }

    final class FeedPresenter {
        let client: any NetworkClient
        weak var view: FeedView?
        init(client: any NetworkClient) { self.client = client }
        func render() -> String { "\(view?.title ?? "?"): \(client.fetchHeadlines().joined(separator: " · "))" }
    }

    final class FeedView {
        let title = "Top stories"
        let presenter: FeedPresenter
        init(presenter: FeedPresenter) { self.presenter = presenter }
    }

    // MARK: Wiring

    static func makeContainer() -> Container {
        let container = Container()
        container.register((any NetworkClient).self) { _ in LiveNetworkClient() }
            .inObjectScope(.permanent)
        container.register(HeadlineStore.self) { r in HeadlineStore(client: try r.resolve()) }
            .inObjectScope(.permanent)
        // The view needs its presenter in its initialiser; the presenter gets its (weak) view afterwards, in a hook
        // that runs once the whole graph is built. Both are graph-scoped, so the hook sees the same view.
        container.register(FeedPresenter.self) { r in FeedPresenter(client: try r.resolve()) }
            .initCompleted { r, presenter in presenter.view = try r.resolve(FeedView.self) }
        container.register(FeedView.self) { r in FeedView(presenter: try r.resolve()) }
        return container
    }

    static func run() throws {
        let app = makeContainer()

        let view = try app.resolve(FeedView.self)
        print("app:   \(view.presenter.render())")
        print("       presenter.view is the view: \(view.presenter.view === view)")

        // A test swaps the network client in a child. Graph-scoped services resolved from the child see the stub;
        // the app's permanent store was built from the app's container and keeps the live client.
        let test = app.makeChild()
        test.register((any NetworkClient).self) { _ in StubNetworkClient() }
        let testView = try test.resolve(FeedView.self)
        print("test:  \(testView.presenter.render())")
        let store = try test.resolve(HeadlineStore.self)
        print("       the app's permanent store still uses \(type(of: store.client))")
        print("       and is the app's instance: \(store === (try app.resolve(HeadlineStore.self)))")

        // Mistakes throw errors that say what to do.
        do {
            _ = try app.resolve(FeedView.self, name: "compact")
        } catch {
            print("a typo throws: \(error)")
        }
    }
}
