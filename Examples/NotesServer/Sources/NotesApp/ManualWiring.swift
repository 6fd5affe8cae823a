public import Hummingbird
import Synchronization

// The same server wired by hand, without a container: the same service types, the same lifetimes. It is what the
// Arbor wiring replaces, and what the load test compares it with.

/// The app-wide services, made once: what the Arbor wiring registers as `.permanent` (and the `.weak` renderer).
public final class ManualServices: Sendable {
    /// The notes.
    public let store: NoteStore
    /// The clock new notes are stamped with.
    public let clock: any WallClock
    /// The generator of new notes' identifiers.
    public let ids: any IDGenerator
    /// The activity log.
    public let log: ActivityLog
    private let renderer = WeakShared { NoteRenderer() }

    /// Makes the services; pass your own to replace one, as a test would.
    public init(
        store: NoteStore = NoteStore(),
        clock: any WallClock = SystemWallClock(),
        ids: any IDGenerator = RandomIDGenerator(),
        log: ActivityLog = ActivityLog()
    ) {
        self.store = store
        self.clock = clock
        self.ids = ids
        self.log = log
    }

    /// The renderer the requests share while any of them holds it.
    func sharedRenderer() -> NoteRenderer {
        renderer.get()
    }
}

/// One request's services, made by hand: the unit of work on first use, kept until the request ends.
public final class ManualRequestScope: Sendable {
    private let services: ManualServices

    private struct State {
        var work: NotesUnitOfWork?
        var isEnded = false
    }

    private let state = Mutex(State())

    /// Begins a request.
    public init(services: ManualServices) {
        self.services = services
    }

    /// The request's unit of work, made on first use.
    public func unitOfWork() throws -> NotesUnitOfWork {
        try state.withLock { state in
            if state.isEnded { throw UnitOfWorkEnded() }
            if let work = state.work { return work }
            let work = NotesUnitOfWork(store: services.store, log: services.log)
            state.work = work
            return work
        }
    }

    /// A new controller, with its auditor, on the request's unit of work.
    public func notesController() throws -> NotesController {
        let auditor = NotesAuditor(log: services.log)
        let controller = NotesController(
            work: try unitOfWork(), clock: services.clock, ids: services.ids, auditor: auditor)
        auditor.controller = controller
        return controller
    }

    /// The shared renderer.
    public func noteRenderer() -> NoteRenderer {
        services.sharedRenderer()
    }

    /// Ends the request: ends its unit of work, if it made one. Ending twice does nothing more.
    public func end() {
        let work = state.withLock { state -> NotesUnitOfWork? in
            state.isEnded = true
            defer { state.work = nil }
            return state.work
        }
        work?.end()
    }

    deinit {
        end()
    }
}

/// Gives every request a ``ManualRequestScope`` and ends it once the response has been written: what
/// `RequestContainerMiddleware` does with a child container.
public struct ManualRequestScopeMiddleware: RouterMiddleware {
    /// The app-wide services.
    public let services: ManualServices

    /// Makes the middleware.
    public init(services: ManualServices) {
        self.services = services
    }

    /// Runs the rest of the chain with a new request scope, and ends it when the response has been written.
    public func handle(
        _ request: Request,
        context: ManualRequestContext,
        next: (Request, ManualRequestContext) async throws -> Response
    ) async throws -> Response {
        let scope = ManualRequestScope(services: services)
        var context = context
        context.scope = scope
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            scope.end()
            throw error
        }
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            do {
                try await body.write(writer)
            } catch {
                scope.end()
                throw error
            }
            scope.end()
        }
        return response
    }
}

/// The hand-wired server's request context: it carries the request's ``ManualRequestScope``.
public struct ManualRequestContext: NotesRequestContext {
    /// What Hummingbird keeps for the request.
    public var coreContext: CoreRequestContextStorage
    /// The request's services, set by ``ManualRequestScopeMiddleware``.
    public var scope: ManualRequestScope?

    /// Makes the context; the middleware sets the scope.
    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// A new controller on the request's unit of work.
    public func notesController() throws -> NotesController {
        try requireScope().notesController()
    }

    /// The request's unit of work.
    public func unitOfWork() throws -> NotesUnitOfWork {
        try requireScope().unitOfWork()
    }

    /// The shared renderer.
    public func noteRenderer() throws -> NoteRenderer {
        try requireScope().noteRenderer()
    }

    private func requireScope() throws -> ManualRequestScope {
        guard let scope else { throw HTTPError(.internalServerError) }
        return scope
    }
}

/// The notes server wired by hand.
public enum ManualWiring {
    /// A router with the notes routes, that gives every request its own ``ManualRequestScope``.
    public static func makeRouter(services: ManualServices) -> Router<ManualRequestContext> {
        let router = Router(context: ManualRequestContext.self)
        router.add(middleware: ManualRequestScopeMiddleware(services: services))
        NotesAPI.addRoutes(to: router)
        return router
    }
}

/// One instance, shared while anyone holds it, then made again: Arbor's `.weak` scope, by hand.
final class WeakShared<Object: AnyObject & Sendable>: Sendable {
    private struct Reference {
        weak var object: Object?
    }

    private let make: @Sendable () -> Object
    private let current = Mutex(Reference())

    init(_ make: @escaping @Sendable () -> Object) {
        self.make = make
    }

    func get() -> Object {
        current.withLock { current in
            if let object = current.object { return object }
            let object = make()
            current.object = object
            return object
        }
    }
}
