import Arbor
import Foundation
import Testing

// The Swift snippets of the article "Threads and Swift concurrency" (Sources/Arbor/Arbor.docc/ThreadsAndConcurrency.md),
// compiled and run, like the README's (ReadmeTests.swift): each is copied between `// ARTICLE: <section>` and
// `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks that the copies and the article agree.

private enum ConcurrencyArticle {
    struct DatabaseConfig: Sendable {}
    final class Database: Sendable {
        init() {}
        static func connect(config: DatabaseConfig) async throws -> Database {
            await Task.yield()
            return Database()
        }
    }
    protocol Clock: Sendable {}
    struct SystemClock: Clock {}
    final class Repository: Sendable {
        let database: Database
        let clock: any Clock
        init(database: Database, clock: any Clock) {
            self.database = database
            self.clock = clock
        }
    }
    protocol HTTPClient: Sendable {}
    struct LiveClient: HTTPClient {}
    protocol Settings: AnyObject, Sendable {}
    final class FileSettings: Settings {}
    final class ReportClient: Sendable {
        let settings: any Settings
        init(settings: any Settings) { self.settings = settings }
    }
    final class AppCoordinator: Sendable {}
    @MainActor final class FeedViewModel {
        let client: any HTTPClient
        var coordinator: AppCoordinator?
        init(client: any HTTPClient) {
            MainActor.assertIsolated()
            self.client = client
        }
    }
    @MainActor final class ProfileViewModel {
        let client: any HTTPClient
        init(client: any HTTPClient) {
            MainActor.assertIsolated()
            self.client = client
        }
    }
    final class UnitOfWork: @unchecked Sendable {
        private let lock = NSLock()
        private var pending: [String] = []
        private(set) var rolledBack = false
        init(database: Database) {}
        func insert(_ row: String) { lock.withLock { pending.append(row) } }
        func rollBackIfOpen() async {
            await Task.yield()
            lock.withLock {
                rolledBack = !pending.isEmpty
                pending = []
            }
        }
    }

    static func makeContainer() -> Container {
        let container = Container()
        container.register(DatabaseConfig.self) { _ in DatabaseConfig() }
        container.register(HTTPClient.self) { _ in LiveClient() }
        return container
    }

    @Suite struct Tests {
        @Test func asyncFactories() async throws {
            let container = makeContainer()
            // ARTICLE: Async factories
            container.register(Database.self) { r async throws in
                try await Database.connect(config: try r.resolve())
            }
            .inObjectScope(.permanent)
            container.register(Repository.self) { r async throws in
                Repository(database: try await r.resolve(), clock: try await r.resolve())
            }
            container.register(Clock.self) { _ in SystemClock() }  // a synchronous factory, in the same graph

            let repository = try await container.resolve(Repository.self)
            // ARTICLE end
            #expect(repository.database === (try await container.resolve(Database.self)))
            #expect(repository.clock is SystemClock)
        }

        @Test func topLevelCode() async throws {
            let container = makeContainer()
            container.register(Database.self) { r async throws in
                try await Database.connect(config: try r.resolve())
            }
            .inObjectScope(.permanent)
            // ARTICLE: Swift concurrency
            // main.swift
            let database = try await Task { try await container.resolve(Database.self) }.value
            // ARTICLE end
            #expect(try await container.resolve(Database.self) === database)
        }

        @Test func actorIsolation() async throws {
            let container = makeContainer()
            // ARTICLE: Actor isolation
            container.register(FeedViewModel.self) { @MainActor r in
                FeedViewModel(client: try r.resolve())
            }

            @MainActor func showFeed() throws -> FeedViewModel {
                try container.resolve(FeedViewModel.self)  // built here, on the main actor
            }

            func prefetchFeed() async throws -> FeedViewModel {
                try await container.resolve(FeedViewModel.self)  // Arbor goes to the main actor to build it
            }
            // ARTICLE end
            let shown = try await showFeed()
            let prefetched = try await prefetchFeed()
            #expect(shown !== prefetched, "graph scope: one per resolve")
        }

        @Test func actorIsolationOfAHook() async throws {
            let container = makeContainer()
            container.register(AppCoordinator.self) { _ in AppCoordinator() }.inObjectScope(.permanent)
            // ARTICLE: Actor isolation
            container.register(FeedViewModel.self) { @MainActor r in FeedViewModel(client: try r.resolve()) }
                .initCompleted { @MainActor r, model in model.coordinator = try r.resolve(AppCoordinator.self) }
            // ARTICLE end
            let coordinator = try await container.resolve(AppCoordinator.self)
            let prefetched = try await Task.detached { try await container.resolve(FeedViewModel.self) }.value
            let shown = try await MainActor.run { try container.resolve(FeedViewModel.self) }
            await MainActor.run {
                #expect(prefetched.coordinator === coordinator)
                #expect(shown.coordinator === coordinator)
            }
        }

        @Test func defaultMainActorIsolation() async throws {
            let container = makeContainer()
            // ARTICLE: Default main-actor isolation
            container.register(ProfileViewModel.self) { @MainActor r in ProfileViewModel(client: try r.resolve()) }
            // ARTICLE end
            let model = try await Task.detached { try await container.resolve(ProfileViewModel.self) }.value
            await MainActor.run { #expect(model.client is LiveClient) }
        }

        @Test func actorIsolationOfAKeptViewModel() async throws {
            let container = makeContainer()
            // ARTICLE: Actor isolation
            container.register(FeedViewModel.self) { @MainActor r in FeedViewModel(client: try r.resolve()) }
                .inObjectScope(.permanent)

            @MainActor func showKeptFeed() async throws -> FeedViewModel {
                try await container.resolve(FeedViewModel.self)  // built here, or waits for a prefetch, suspended
            }
            // ARTICLE end
            let prefetch = Task.detached { try await container.resolve(FeedViewModel.self) }
            let shown = try await showKeptFeed()
            #expect(try await prefetch.value === shown, "one kept view model")
        }

        @Test func waitingWithoutBlockingAndCancellation() async throws {
            let container = makeContainer()
            container.register(Database.self) { r async throws in
                try await Database.connect(config: try r.resolve())
            }
            .inObjectScope(.permanent)
            var used: Database?
            var reported: ResolutionError?
            func use(_ database: Database) { used = database }
            func report(_ error: ResolutionError) { reported = error }
            // ARTICLE: Waiting without blocking, and cancellation
            do {
                let database = try await container.resolve(Database.self)
                use(database)
            } catch is CancellationError {
                // The task was cancelled while another task was building the database.
            } catch let error as ResolutionError {
                // For example .factoryFailed(CancellationError()), when the factory itself stopped.
                report(error)
            }
            // ARTICLE end
            #expect(used != nil)
            #expect(reported == nil)
        }

        /// The settings' hook keeps them with the database's resolve, which awaits its gate meanwhile: the report
        /// client's synchronous factory, in an `async` resolve, runs again once the settings are handed out.
        @Test func waitingWithoutBlockingInASynchronousFactory() async throws {
            let container = makeContainer()
            let gate = Gate()
            container.register((any Settings).self) { _ in FileSettings() }.inObjectScope(.permanent)
                .initCompleted { _, _ in }
            container.register(Database.self) { r async throws in
                _ = try await r.resolve((any Settings).self)
                await gate.passAsync()
                return Database()
            }
            let database = Task { try await container.resolve(Database.self) }
            #expect(await poll { gate.hasArrivals })
            // ARTICLE: Waiting without blocking, and cancellation
            container.register(ReportClient.self) { r in
                // In `try await container.resolve(ReportClient.self)`, while another task's resolve
                // holds the settings and awaits: this factory stops here, the resolve awaits the
                // settings, and runs the factory again.
                ReportClient(settings: try r.resolve())
            }
            // ARTICLE end
            let client = Task { try await container.resolve(ReportClient.self) }
            gate.open()
            _ = try await database.value
            let settings = try await container.resolve((any Settings).self)
            #expect(try await client.value.settings === settings)
        }

        @Test func asyncTeardown() async throws {
            let container = makeContainer()
            container.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
            // ARTICLE: Async teardown
            container.register(UnitOfWork.self) { r in UnitOfWork(database: try r.resolve()) }
                .inObjectScope(.perContainer)
                .onRelease { work async in await work.rollBackIfOpen() }

            let request = container.makeChild()
            let work = try await request.resolve(UnitOfWork.self)
            work.insert("a note")
            await request.closeAndWait()  // rolled back before this line
            // ARTICLE end
            #expect(work.rolledBack)
        }

        /// Every Swift block of the article has its copy in this file, under the title of its section, and every copy
        /// here is still in the article.
        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/ThreadsAndConcurrency.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath))
