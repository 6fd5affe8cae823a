#if Hummingbird
import Arbor
import ArborHummingbird
import ArborTestSupport
import ArborTesting
import Hummingbird
import HummingbirdTesting
import Testing

#if ServiceLifecycle
import ArborServiceLifecycle
import Logging
import ServiceLifecycle
#endif

// The Hummingbird server of the article "A container per request" (Sources/Arbor/Arbor.docc/AContainerPerRequest.md),
// and its `main.swift`s with service lifecycle, compiled and run: each snippet is copied between `// ARTICLE:
// <section>` and `// ARTICLE end`, and ArborTests' ContainerPerRequestArticleTests checks that the copies and the
// article agree. The article's types are declared here, private to the file.

/// The app's pool: it keeps the units of work it opened, and records their rollbacks for a test to wait for (a live
/// server's middleware closes a request's container after the response has gone). Closed by the root's `async`
/// release hook.
private final class ConnectionPool: Sendable {
    private let state = Locked((units: [UnitOfWork](), isClosed: false))
    let rollbacks = ReleaseRecorder()

    func open(_ unit: UnitOfWork) { state.withLock { $0.units.append(unit) } }

    func close() async {
        await Task.yield()
        state.withLock { $0.isClosed = true }
    }

    var units: [UnitOfWork] { state.withLock { $0.units } }
}

private final class UnitOfWork: Sendable {
    let user: User
    private let pool: ConnectionPool
    private let rolledBack = Locked(false)

    init(pool: ConnectionPool, user: User) {
        self.user = user
        self.pool = pool
        pool.open(self)
    }

    func rollBackIfOpen() {
        rolledBack.withLock { $0 = true }
        pool.rollbacks.record("rollback for \(user.name)")
    }

    var isRolledBack: Bool { rolledBack.withLock { $0 } }
}

private final class NotesHandler: Sendable {
    let work: UnitOfWork
    init(work: UnitOfWork) { self.work = work }
    func note(id: String) -> String { "note \(id) for \(work.user.name)" }
}

// ARTICLE: Hummingbird: `ArborHummingbird`
struct AppRequestContext: ContainerRequestContext {
    var coreContext: CoreRequestContextStorage
    var requestContainer: Container?
    init(source: Source) { coreContext = .init(source: source) }
}

struct User: Sendable { let name: String }

/// The app's services, registered once.
func makeContainer() -> Container {
    let container = Container()
    container.register(ConnectionPool.self) { _ in ConnectionPool() }
        .inObjectScope(.permanent)
        .onRelease { pool in await pool.close() }  // when the root is closed: see "Service lifecycle"
    container.register(UnitOfWork.self) { r in UnitOfWork(pool: try r.resolve(), user: try r.resolve()) }
        .inObjectScope(.perContainer)
        .onRelease { work in work.rollBackIfOpen() }
    container.register(NotesHandler.self) { r in NotesHandler(work: try r.resolve()) }
    return container
}

/// The routes, each request with a child of `root`.
func buildRouter(root: Container) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(
        middleware: RequestContainerMiddleware(root: root) { request, context, child in
            // The request's own values, registered in its child before any handler runs.
            guard let name = request.headers[.init("X-User")!] else {
                throw HTTPError(.unauthorized, message: "Send your user name in an X-User header.")
            }
            child.register(User.self, instance: User(name: name))
        })
    router.get("/notes/:id") { request, context in
        try await context.container.resolve(NotesHandler.self).note(id: try context.parameters.require("id"))
    }
    return router
}
// ARTICLE end

/// The article's `main.swift`, compiled: it serves until the process is stopped, so no test calls it. The test below
/// serves the same router with Hummingbird's testing library.
private func articleMain() async throws {
    // ARTICLE: Hummingbird: `ArborHummingbird`
    let server = Application(
        router: buildRouter(root: makeContainer()),
        configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
    try await server.runService()
    // ARTICLE end
}

#if ServiceLifecycle
/// The article's `main.swift` with the container as a service of Hummingbird's `Application`, compiled: no test calls
/// it (ArborServiceLifecycleTests runs a `ContainerService` in a group, with a shutdown signal).
private func articleMainWithAService() async throws {
    // ARTICLE: Service lifecycle: `ArborServiceLifecycle`
    let container = makeContainer()
    // Hummingbird stops its server first, then its services, the last first.
    let server = Application(
        router: buildRouter(root: container),
        configuration: .init(address: .hostname("127.0.0.1", port: 8080)),
        services: [ContainerService(container)])
    try await server.runService()
    // ARTICLE end
}

/// The article's `main.swift` with a service group of its own, compiled: no test calls it.
private func articleMainWithAGroup() async throws {
    // ARTICLE: Service lifecycle: `ArborServiceLifecycle`
    let container = makeContainer()
    let server = Application(router: buildRouter(root: container))
    // Services stop in the reverse of their order: list the container first, so it ends after the server.
    let group = ServiceGroup(
        services: [ContainerService(container), server],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: Logger(label: "notes"))
    try await group.run()
    // ARTICLE end
}
#endif

@Suite struct ContainerPerRequestArticleTests {
    @Test func theServerGivesEachRequestItsUnitOfWorkAndEndsIt() async throws {
        let root = makeContainer()
        let pool = try await root.resolve(ConnectionPool.self)
        try await Application(router: buildRouter(root: root)).test(.router) { client in
            for user in ["ann", "bob"] {
                let response = try await client.execute(
                    uri: "/notes/7", method: .get, headers: [.init("X-User")!: user])
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "note 7 for \(user)")
            }
            let rejected = try await client.execute(uri: "/notes/7", method: .get)
            #expect(rejected.status == .unauthorized)
            #expect(String(buffer: rejected.body).contains("Send your user name in an X-User header."))
        }
        #expect(await pool.rollbacks.wait(for: 2), "each request's unit of work ended with its request")
        #expect(pool.units.map(\.user.name) == ["ann", "bob"], "one unit of work a served request")
        #expect(pool.units.allSatisfy { $0.isRolledBack })
    }
}
#endif
