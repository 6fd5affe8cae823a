public import Arbor
public import ArborVapor
public import NotesCore
public import Vapor

/// Sets up the notes server on a Vapor application, wired one way or the other.
public enum VaporNotesApplication {
    /// Wires `app` with Arbor: every request gets a child of `root` as `request.container`, with the request's
    /// user registered in it; `root` is closed when the app shuts down.
    ///
    /// - Parameters:
    ///   - root: The container with the notes services: `NotesAssembly.makeContainer()`, or in a test a child of it
    ///     that overrides some of them.
    ///   - releaseHooks: How a request's child is closed. The notes services' only release hook (the unit of
    ///     work's `end()`) is synchronous, so the server closes a request's child on the event loop as its response
    ///     goes (`.synchronous`), which saves a task per request; `.awaited` is there to measure what that task
    ///     costs.
    public static func arbor(
        _ app: Application, root: Container = NotesAssembly.makeContainer(),
        releaseHooks: RequestContainerMiddleware.ReleaseHooks = .synchronous
    ) {
        app.useRequestContainers(root: root, releaseHooks: releaseHooks) { request, child in
            try NotesAssembly.registerRequestValues(
                userHeader: request.headers.first(name: RequestUser.header), in: child)
        }
        VaporNotesAPI.addRoutes(to: app) { request in ArborNotesServices(try request.container) }
    }

    /// Wires `app` by hand: every request gets a ``NotesCore/ManualRequestScope``.
    public static func manual(_ app: Application, services: ManualServices = ManualServices()) {
        app.middleware.use(ManualScopeMiddleware(services: services))
        VaporNotesAPI.addRoutes(to: app) { request in try ManualScopeMiddleware.scope(of: request) }
    }

    /// Wires `app` as `wiring` says; an Arbor-wired app closes its requests' children as `releaseHooks` says, and a
    /// hand-wired one uses `services`.
    public static func configure(
        _ app: Application, wiring: Wiring, releaseHooks: RequestContainerMiddleware.ReleaseHooks = .synchronous,
        services: ManualServices = ManualServices()
    ) {
        switch wiring {
        case .arbor: arbor(app, releaseHooks: releaseHooks)
        case .manual: manual(app, services: services)
        }
    }
}

// The same server wired by hand, without a container: what `RequestContainerMiddleware` does, for one kind of scope.

/// Gives every request a ``NotesCore/ManualRequestScope``, made when the request first asks for it, and ended once
/// the response has been written (when Vapor lets the response go) or at once when the chain fails.
public struct ManualScopeMiddleware: Middleware {
    /// The app-wide services.
    public let services: ManualServices

    /// Makes the middleware.
    public init(services: ManualServices) {
        self.services = services
    }

    /// Runs the rest of the chain with a place for the request's scope, and ends the scope with the response.
    public func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let holder = Holder(services: services)
        request.storage[Holder.self] = holder
        return next.respond(to: request).flatMapErrorThrowing { error in
            holder.end()
            throw error
        }.map { response in
            response.storage[Ender.self] = Ender(holder: holder)
            return response
        }
    }

    /// The request's scope, made on first use.
    public static func scope(of request: Request) throws -> ManualRequestScope {
        guard let holder = request.storage[Holder.self] else { throw Abort(.internalServerError) }
        return try holder.scope(for: request)
    }

    final class Holder: StorageKey, @unchecked Sendable {
        typealias Value = Holder
        private let services: ManualServices
        private let lock = NSLock()
        private var made: ManualRequestScope?

        init(services: ManualServices) {
            self.services = services
        }

        func scope(for request: Request) throws -> ManualRequestScope {
            try lock.withLock {
                if let made { return made }
                let scope = ManualRequestScope(
                    services: services, user: try RequestUser(header: request.headers.first(name: RequestUser.header)))
                made = scope
                return scope
            }
        }

        func end() {
            lock.withLock { made }?.end()
        }
    }

    final class Ender: StorageKey, Sendable {
        typealias Value = Ender
        let holder: Holder

        init(holder: Holder) {
            self.holder = holder
        }

        deinit {
            holder.end()
        }
    }
}
