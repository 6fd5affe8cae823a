import Arbor
import ArborTestSupport
import Foundation
import Testing

// The Swift snippets of the article "Lifetimes and the container tree"
// (Sources/Arbor/Arbor.docc/LifetimesAndTheContainerTree.md), compiled and run, like the README's (ReadmeTests.swift):
// each is copied between `// ARTICLE: <section>` and `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks
// that the copies and the article agree. The article's scope of its own is declared at file level, as in the article.

// ARTICLE: Scopes of your own
extension ObjectScope {
    static let session = ObjectScope(name: "session", retention: .strong)
}
// ARTICLE end

private enum LifetimesArticle {
    protocol Engine: AnyObject, Sendable {}
    final class V8: Engine {}
    final class Session: Sendable {}
    final class Request: Sendable {}
    final class Presenter: Sendable {}
    final class Cart: Sendable {}
    final class Database: Sendable {}
    final class UserSession: Sendable {}

    final class UnitOfWork: Sendable {
        let database: Database
        let request: Request
        private let rolledBack = Locked(false)
        init(database: Database, request: Request) {
            self.database = database
            self.request = request
        }
        func rollBackIfOpen() { rolledBack.withLock { $0 = true } }
        var isRolledBack: Bool { rolledBack.withLock { $0 } }
    }
    final class NotesController: Sendable {
        let work: UnitOfWork
        init(work: UnitOfWork) { self.work = work }
    }

    protocol HTTPClient: AnyObject, Sendable {}
    final class LiveClient: HTTPClient {}
    final class StubClient: HTTPClient {}
    final class ForecastCache: Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }
    final class FeedModel: Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }

    final class Connection: Sendable {
        private let disconnected = Locked(false)
        func disconnect() { disconnected.withLock { $0 = true } }
        var isDisconnected: Bool { disconnected.withLock { $0 } }
    }

    /// Counts the instances a container and its children build, by key.
    final class Builds: ResolutionObserver {
        private let counts = Locked<[ServiceKey: Int]>([:])
        func instanceBuilt(_ event: InstanceBuilt) { counts.withLock { $0[event.key, default: 0] += 1 } }
        func of<Service>(_ type: Service.Type) -> Int { counts.withLock { $0[ServiceKey(type)] ?? 0 } }
    }

    /// The reason of the error `body` throws, if it throws a `ResolutionError`.
    static func reason(_ body: () throws -> Void) -> ResolutionError.Reason? {
        do {
            try body()
            return nil
        } catch {
            return (error as? ResolutionError)?.reason
        }
    }

    static func isContainerClosed(_ reason: ResolutionError.Reason?) -> Bool {
        if case .containerClosed = reason { true } else { false }
    }

    @Suite struct Tests {
        @Test func theFiveScopes() throws {
            let container = Container()
            let builds = Builds()
            container.addObserver(builds)
            // ARTICLE: The five scopes
            container.register(Engine.self) { _ in V8() }.inObjectScope(.permanent)  // one, shared with its children
            container.register(Session.self) { _ in Session() }.inObjectScope(.weak)  // shared while someone holds it
            container.register(Request.self) { _ in Request() }.inObjectScope(.transient)  // a new one every time
            container.register(Presenter.self) { _ in Presenter() }  // .graph, the default
            // ARTICLE end

            let engine = try container.resolve(Engine.self)
            #expect(try container.resolve(Engine.self) === engine)
            #expect(try container.makeChild().resolve(Engine.self) === engine, "the child shares the parent's engine")

            weak var released: Session?
            do {
                let session = try container.resolve(Session.self)
                #expect(try container.resolve(Session.self) === session, "shared while someone holds it")
                released = session
            }
            #expect(released == nil, "the container holds it only weakly")
            _ = try container.resolve(Session.self)
            #expect(builds.of(Session.self) == 2, "once no one holds it, the next resolve builds a new one")

            #expect(try container.resolve(Request.self) !== (try container.resolve(Request.self)))
            #expect(try container.resolve(Presenter.self) !== (try container.resolve(Presenter.self)))
            #expect(container.defaultScope == .graph)
        }

        @Test func perContainer() throws {
            let app = Container()
            app.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
            app.register(NotesController.self) { r in NotesController(work: try r.resolve()) }
            let incoming = Request()
            // ARTICLE: The five scopes
            app.register(UnitOfWork.self) { r in UnitOfWork(database: try r.resolve(), request: try r.resolve()) }
                .inObjectScope(.perContainer)
                .onRelease { work in work.rollBackIfOpen() }

            // per request:
            let request = app.makeChild()
            request.register(Request.self, instance: incoming)
            let notes = try request.resolve(NotesController.self)  // its UnitOfWork is this request's
            request.close()  // releases it, running onRelease
            // ARTICLE end

            #expect(notes.work.request === incoming, "built from the request's container, with its values")
            #expect(notes.work.database === (try app.resolve(Database.self)), "and with its ancestors'")
            #expect(notes.work.isRolledBack)
            #expect(isContainerClosed(reason { _ = try request.resolve(UnitOfWork.self) }))

            let next = app.makeChild()
            next.register(Request.self, instance: Request())
            let nextNotes = try next.resolve(NotesController.self)
            #expect(nextNotes.work !== notes.work, "each request's child gets its own")
            #expect(try next.resolve(UnitOfWork.self) === nextNotes.work, "shared with everything resolved from it")
            #expect(!nextNotes.work.isRolledBack)
            next.close()
            #expect(nextNotes.work.isRolledBack)
        }

        @Test func scopesOfYourOwn() throws {
            let container = Container()
            // ARTICLE: Scopes of your own
            container.register(Cart.self) { _ in Cart() }.inObjectScope(.session)
            let cart = try container.resolve(Cart.self)  // shared like .permanent…
            container.resetObjectScope(.session)  // …until the user logs out
            let next = try container.resolve(Cart.self)  // a new one
            // ARTICLE end

            #expect(next !== cart)
            #expect(try container.resolve(Cart.self) === next)
            #expect(try container.makeChild().resolve(Cart.self) === next)
        }

        @Test func resetOneRegistration() throws {
            let container = Container()
            let released = Locked<[String]>([])
            container.register(UserSession.self) { _ in UserSession() }
                .inObjectScope(.permanent)
                .onRelease { _ in released.withLock { $0.append("session") } }
            container.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
            container.register(Database.self, name: "replica") { _ in Database() }
                .inObjectScope(.permanent)
                .onRelease { _ in released.withLock { $0.append("replica") } }
            container.register(Cart.self) { _ in Cart() }.inObjectScope(.session)
            let session = try container.resolve(UserSession.self)
            let primary = try container.resolve(Database.self)
            let replica = try container.resolve(Database.self, name: "replica")
            let cart = try container.resolve(Cart.self)
            // ARTICLE: Scopes of your own
            container.resetInstance(of: UserSession.self)  // the next resolve starts a new session
            container.resetInstance(of: Database.self, name: "replica")
            // ARTICLE end

            #expect(released.withLock { $0 } == ["session", "replica"])
            #expect(try container.resolve(UserSession.self) !== session)
            #expect(try container.resolve(Database.self, name: "replica") !== replica)
            #expect(try container.resolve(Database.self) === primary, "every other registration keeps its instance")
            #expect(try container.resolve(Cart.self) === cart)
        }

        @Test func aChildResetsOnlyItsOwnInstances() throws {
            let app = Container()
            app.register(UserSession.self) { _ in UserSession() }.inObjectScope(.permanent)
            let session = try app.resolve(UserSession.self)
            let test = app.makeChild()
            #expect(try test.resolve(UserSession.self) === session)
            test.resetInstance(of: UserSession.self)
            test.resetObjectScope(.permanent)
            #expect(try test.resolve(UserSession.self) === session, "a child never resets an ancestor's instance")
        }

        @Test func whoOwnsWhat() throws {
            // ARTICLE: Who owns what
            let app = Container()
            app.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
            app.register(ForecastCache.self) { r in ForecastCache(client: try r.resolve()) }.inObjectScope(.permanent)
            app.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }

            let test = app.makeChild()
            test.register(HTTPClient.self) { _ in StubClient() }

            let model = try test.resolve(FeedModel.self)  // model.client is a StubClient
            let cache = try test.resolve(ForecastCache.self)  // cache.client is app's LiveClient
            // ARTICLE end

            #expect(model.client is StubClient)
            let live = try app.resolve(HTTPClient.self)
            #expect(live is LiveClient)
            #expect(cache.client === live)
            #expect(try app.resolve(ForecastCache.self) === cache, "the app and its children share one cache")
            #expect(try app.resolve(FeedModel.self).client === live, "the app never sees the test's registrations")
        }

        @Test func closingAContainer() throws {
            let app = Container()
            app.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
            let database = try app.resolve(Database.self)
            // ARTICLE: Closing a container and releasing instances
            let session = app.makeChild()
            session.register(Connection.self) { _ in Connection() }
                .inObjectScope(.permanent)
                .onRelease { connection in connection.disconnect() }

            // … the user logs out:
            session.close()  // disconnects; resolving from `session` now throws
            // ARTICLE end

            #expect(session.isClosed)
            #expect(isContainerClosed(reason { _ = try session.resolve(Connection.self) }))
            #expect(isContainerClosed(reason { _ = try session.resolve(Database.self) }))
            #expect(!app.isClosed, "closing never touches ancestors")
            #expect(try app.resolve(Database.self) === database)
        }

        /// The article's session, with a connection in use when the user logs out.
        @Test func closingASessionDisconnectsItsConnection() throws {
            let app = Container()
            let session = app.makeChild()
            session.register(Connection.self) { _ in Connection() }
                .inObjectScope(.permanent)
                .onRelease { connection in connection.disconnect() }
            let connection = try session.resolve(Connection.self)
            #expect(!connection.isDisconnected)
            session.close()
            #expect(connection.isDisconnected)
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/LifetimesAndTheContainerTree.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath))
