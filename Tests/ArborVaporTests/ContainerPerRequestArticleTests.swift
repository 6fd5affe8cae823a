#if Vapor
import Arbor
import ArborTestSupport
import ArborTesting
import ArborVapor
import Testing
import Vapor
import VaporTesting

// The Vapor server of the article "A container per request" (Sources/Arbor/Arbor.docc/AContainerPerRequest.md), its
// groups and its test, compiled and run: each snippet is copied between `// ARTICLE: <section>` and `// ARTICLE end`,
// and ArborTests' ContainerPerRequestArticleTests checks that the copies and the article agree. The article's types
// are declared here, private to the file.

/// The app's pool: it keeps the units of work it opened, and is closed by the root's `async` release hook.
private final class ConnectionPool: Sendable {
    private let state = Locked((units: [UnitOfWork](), isClosed: false))

    func open(_ unit: UnitOfWork) { state.withLock { $0.units.append(unit) } }

    func close() async {
        await Task.yield()
        state.withLock { $0.isClosed = true }
    }

    var units: [UnitOfWork] { state.withLock { $0.units } }
    var isClosed: Bool { state.withLock { $0.isClosed } }
}

private final class UnitOfWork: Sendable {
    let user: User
    private let rolledBack = Locked(false)

    init(pool: ConnectionPool, user: User) {
        self.user = user
        pool.open(self)
    }

    func rollBackIfOpen() { rolledBack.withLock { $0 = true } }
    var isRolledBack: Bool { rolledBack.withLock { $0 } }
}

private final class NotesHandler: Sendable {
    let work: UnitOfWork
    init(work: UnitOfWork) { self.work = work }
    func note(id: String) -> String { "note \(id) for \(work.user.name)" }
    func all() -> String { "all notes for \(work.user.name)" }
}

private struct AdminSession: Sendable {
    let requestID: String
}

// ARTICLE: Vapor: `ArborVapor`
struct User: Sendable { let name: String }

/// The app's services, registered once.
func makeContainer() -> Container {
    let container = Container()
    container.register(ConnectionPool.self) { _ in ConnectionPool() }
        .inObjectScope(.permanent)
        .onRelease { pool in await pool.close() }  // awaited when the app shuts down
    UnitOfWork.register(in: container)
    container.register(NotesHandler.self) { r in NotesHandler(work: try r.resolve()) }
    return container
}

extension UnitOfWork {
    /// How the app registers it; a test registers it again in its child, to mark it (see "Test it").
    @discardableResult
    static func register(in container: Container) -> Registration<UnitOfWork> {
        container.register(UnitOfWork.self) { r in UnitOfWork(pool: try r.resolve(), user: try r.resolve()) }
            .inObjectScope(.perContainer)
            .onRelease { work in work.rollBackIfOpen() }
    }
}

/// Gives each request a child of `root`, and adds the routes.
func configure(_ app: Application, root: Container) {
    app.useRequestContainers(root: root) { request, child in
        // Runs when the request first reads `request.container`.
        guard let name = request.headers.first(name: "X-User") else {
            throw Abort(.unauthorized, reason: "Send your user name in an X-User header.")
        }
        child.register(User.self, instance: User(name: name))
    }
    app.get("notes", ":id") { request in
        try request.container.resolve(NotesHandler.self).note(id: try request.parameters.require("id"))
    }
}
// ARTICLE end

/// The article's `main.swift`, compiled: it serves until the process is stopped, so no test calls it. The tests below
/// serve the same `configure` with Vapor's testing library.
private func articleMain() async throws {
    // ARTICLE: Vapor: `ArborVapor`
    let app = try await Application.make(.detect())
    do {
        configure(app, root: makeContainer())
        try await app.execute()
        try await app.asyncShutdown()  // closes the root, awaiting its release hooks
    } catch {
        try? await app.asyncShutdown()  // also when the server could not start
        throw error
    }
    // ARTICLE end
}

@Suite struct ContainerPerRequestArticleTests {
    @Test func theServerGivesEachRequestItsUnitOfWorkAndEndsIt() async throws {
        let root = makeContainer()
        let pool = try await root.resolve(ConnectionPool.self)
        try await withApp { app in
            configure(app, root: root)
            for user in ["ann", "bob"] {
                try await app.testing().test(.GET, "notes/7", headers: ["X-User": user]) { response in
                    #expect(response.status == .ok)
                    #expect(response.body.string == "note 7 for \(user)")
                }
            }
            try await app.testing().test(.GET, "notes/7") { response in
                #expect(response.status == .unauthorized)
                #expect(response.body.string.contains("Send your user name in an X-User header."))
            }
        }
        #expect(pool.units.map(\.user.name) == ["ann", "bob"], "one unit of work a served request")
        #expect(pool.units.allSatisfy { $0.isRolledBack }, "each ended with its request")
        #expect(pool.isClosed, "the root closed at shutdown, its async hook awaited")
    }

    @Test func aGroupsMiddlewareGivesItsRoutesContainers() async throws {
        let container = makeContainer()
        let pool = try await container.resolve(ConnectionPool.self)
        try await withApp { app in
            // ARTICLE: Vapor: `ArborVapor`
            let containers = RequestContainerMiddleware(root: container) { request, child in
                guard let name = request.headers.first(name: "X-User") else {
                    throw Abort(.unauthorized, reason: "Send your user name in an X-User header.")
                }
                child.register(User.self, instance: User(name: name))
            }
            app.lifecycle.use(containers)
            let api = app.grouped(containers)
            api.get("notes") { request in try request.container.resolve(NotesHandler.self).all() }
            // ARTICLE end

            try await app.testing().test(.GET, "notes", headers: ["X-User": "ann"]) { response in
                #expect(response.status == .ok)
                #expect(response.body.string == "all notes for ann")
            }
        }
        #expect(pool.units.count == 1 && pool.units.allSatisfy { $0.isRolledBack })
        #expect(pool.isClosed, "the lifecycle handler closed the root at shutdown")
    }

    @Test func aGroupsContainerIsAChildOfTheAppsRequestContainer() async throws {
        let container = makeContainer()
        try await withApp { app in
            // ARTICLE: Vapor: `ArborVapor`
            app.useRequestContainers(root: container) { request, child in
                guard let name = request.headers.first(name: "X-User") else {
                    throw Abort(.unauthorized, reason: "Send your user name in an X-User header.")
                }
                child.register(User.self, instance: User(name: name))
            }
            let admin = app.grouped(
                RequestContainerMiddleware(root: container) { request, child in
                    child.register(AdminSession.self, instance: AdminSession(requestID: request.id))
                })
            admin.get("session") { request in
                let user = try request.container.resolve(User.self)  // from the app's hook
                let session = try request.container.resolve(AdminSession.self)  // from the group's
                return "\(user.name), request \(session.requestID)"
            }
            // ARTICLE end

            try await app.testing().test(.GET, "session", headers: ["X-User": "ann"]) { response in
                #expect(response.status == .ok)
                #expect(response.body.string.hasPrefix("ann, request "))
                #expect(response.body.string.count > "ann, request ".count, "the request's id")
            }
        }
    }
}

// ARTICLE: Test it
@Test func aRequestEndsItsUnitOfWork() async throws {
    let releases = ReleaseRecorder()
    let root = ArborTesting.overriding(makeContainer()) { child in
        UnitOfWork.register(in: child).recordingReleases(in: releases)
    }
    try await withApp { app in
        configure(app, root: root)
        try await app.testing().test(.GET, "notes/1", headers: ["X-User": "ann"]) { response in
            #expect(response.status == .ok)
        }
    }
    #expect(await releases.wait(for: 1))  // the request's container was closed, its hooks ran
    #expect(releases.released == ["UnitOfWork"])
}
// ARTICLE end
#endif
