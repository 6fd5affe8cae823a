// The request_scope benchmarks' model and Arbor's request operation, in a file of their own: the notes server in
// `Examples/NotesServer` compiles this same file (a symbolic link in its `NotesCore` sources), so that its `--calibrate`
// mode runs exactly the operation `request_scope` measures inside each request it serves, and `scripts/load.sh` can
// say what that operation costs in a server on the machine at hand (the notes server's README, "Where it stands").
// Everything in it must compile in both modules: Arbor, and the standard library only.

import Arbor

// MARK: - request_scope and request_scope_per_container

// What a server builds for one request: a handler whose graph mixes app-wide services (permanent,
// registered once in the root), two per-request values (`RequestInfo`, `CurrentUser`) and five
// services built for the request, graph scope, with one `UnitOfWork` shared by the repository and
// the audit log. Ten objects in all:
//
//                    NoteHandler ── RequestInfo, AppSettings
//                         |
//                    NoteService ── CurrentUser
//                   /           \
//          NoteRepository      AuditLog ── CurrentUser, Metrics
//           |        \          /
//      AppSettings   UnitOfWork ── RequestInfo, ConnectionPool

/// App-wide settings (permanent).
final class AppSettings: Sendable {
    let pageSize = 50
    init() {}
}

/// App-wide connection pool (permanent).
final class ConnectionPool: Sendable {
    init() {}
}

/// App-wide metrics (permanent).
final class Metrics: Sendable {
    init() {}
}

/// The request being served (per request).
final class RequestInfo {
    let id: Int
    init(id: Int) { self.id = id }
}

/// The signed-in user of the request (per request).
final class CurrentUser {
    let name: String
    init(name: String) { self.name = name }
}

final class UnitOfWork {
    let pool: ConnectionPool
    let request: RequestInfo
    init(pool: ConnectionPool, request: RequestInfo) {
        self.pool = pool
        self.request = request
    }
}

final class NoteRepository {
    let unitOfWork: UnitOfWork
    let settings: AppSettings
    init(unitOfWork: UnitOfWork, settings: AppSettings) {
        self.unitOfWork = unitOfWork
        self.settings = settings
    }
}

final class AuditLog {
    let user: CurrentUser
    let metrics: Metrics
    let unitOfWork: UnitOfWork
    init(user: CurrentUser, metrics: Metrics, unitOfWork: UnitOfWork) {
        self.user = user
        self.metrics = metrics
        self.unitOfWork = unitOfWork
    }
}

final class NoteService {
    let repository: NoteRepository
    let audit: AuditLog
    let user: CurrentUser
    init(repository: NoteRepository, audit: AuditLog, user: CurrentUser) {
        self.repository = repository
        self.audit = audit
        self.user = user
    }
}

/// The root of the request graph.
final class NoteHandler {
    let service: NoteService
    let request: RequestInfo
    let settings: AppSettings
    init(service: NoteService, request: RequestInfo, settings: AppSettings) {
        self.service = service
        self.request = request
        self.settings = settings
    }

    /// True when one request's graph is wired as intended: one unit of work, one request, one user.
    var isWired: Bool {
        service.repository.unitOfWork === service.audit.unitOfWork
            && service.repository.unitOfWork.request === request
            && service.audit.user === service.user
            && service.repository.settings === settings
    }
}

/// The `request_scope` operation with Arbor: a request's child of `app`, its two per-request values registered as
/// instances, the handler's graph resolved from it, and the child closed.
enum RequestScopeOperation {
    /// The app's container: the request graph's services, the permanent ones already made.
    static func makeApp() throws -> Container {
        let app = Container(defaultScope: .graph)
        app.register(AppSettings.self) { _ in AppSettings() }.inObjectScope(.permanent)
        app.register(ConnectionPool.self) { _ in ConnectionPool() }.inObjectScope(.permanent)
        app.register(Metrics.self) { _ in Metrics() }.inObjectScope(.permanent)
        app.register(UnitOfWork.self) { r in UnitOfWork(pool: try r.resolve(), request: try r.resolve()) }
        app.register(NoteRepository.self) { r in
            NoteRepository(unitOfWork: try r.resolve(), settings: try r.resolve())
        }
        app.register(AuditLog.self) { r in
            AuditLog(user: try r.resolve(), metrics: try r.resolve(), unitOfWork: try r.resolve())
        }
        app.register(NoteService.self) { r in
            NoteService(repository: try r.resolve(), audit: try r.resolve(), user: try r.resolve())
        }
        app.register(NoteHandler.self) { r in
            NoteHandler(service: try r.resolve(), request: try r.resolve(), settings: try r.resolve())
        }
        _ = try app.resolve(AppSettings.self)
        _ = try app.resolve(ConnectionPool.self)
        _ = try app.resolve(Metrics.self)
        return app
    }

    /// The operation, one request a call: a child of `app`, the request's values registered in it, the handler
    /// resolved, the child closed.
    static func operation(in app: Container) -> @Sendable () throws -> NoteHandler {
        {
            let child = requestChild(of: app)
            defer { child.close() }
            return try child.resolve(NoteHandler.self)
        }
    }

    /// A request's child of `app`, with the request's two values registered in it: the operation's first half, which
    /// the benchmark's `request_values` row runs alone (and closes).
    @inline(__always)
    static func requestChild(of app: Container) -> Container {
        let child = app.makeChild()
        child.register(RequestInfo.self, instance: RequestInfo(id: 1))
        child.register(CurrentUser.self, instance: CurrentUser(name: "ann"))
        return child
    }
}

/// The `request_scope` operation wired by hand: the same graph made with its initialisers, no container. (The
/// benchmark's `manual` library runs it; the notes server's `--calibrate hand_wired` runs it once a request.)
struct HandWiredRequestScope: Sendable {
    let settings = AppSettings()
    let pool = ConnectionPool()
    let metrics = Metrics()

    /// One request's graph, from its two values.
    func handle(_ request: RequestInfo, _ user: CurrentUser) -> NoteHandler {
        let unitOfWork = UnitOfWork(pool: pool, request: request)
        let service = NoteService(
            repository: NoteRepository(unitOfWork: unitOfWork, settings: settings),
            audit: AuditLog(user: user, metrics: metrics, unitOfWork: unitOfWork),
            user: user)
        return NoteHandler(service: service, request: request, settings: settings)
    }

    /// The operation, one request a call.
    static func operation() -> @Sendable () throws -> NoteHandler {
        let app = HandWiredRequestScope()
        return { app.handle(RequestInfo(id: 1), CurrentUser(name: "ann")) }
    }
}
