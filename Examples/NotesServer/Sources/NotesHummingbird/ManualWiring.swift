import HTTPTypes
public import Hummingbird
public import NotesCore

// The same server wired by hand, without a container: the same service types, the same lifetimes. It is what the
// Arbor wiring replaces, and what the load test compares it with.

/// Gives every request a ``NotesCore/ManualRequestScope`` and ends it once the response has been written: what
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
        let scope = ManualRequestScope(
            services: services, user: try RequestUser(header: request.headers[ArborWiring.userHeader]))
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

/// The hand-wired server's request context: it carries the request's ``NotesCore/ManualRequestScope``.
public struct ManualRequestContext: NotesRequestContext {
    /// What Hummingbird keeps for the request.
    public var coreContext: CoreRequestContextStorage
    /// The request's services, set by ``ManualRequestScopeMiddleware``.
    public var scope: ManualRequestScope?

    /// Makes the context; the middleware sets the scope.
    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// The request's scope.
    public func services() throws -> any NotesServices {
        guard let scope else { throw HTTPError(.internalServerError) }
        return scope
    }
}

/// The notes server on Hummingbird wired by hand.
public enum ManualWiring {
    /// A router with the notes routes, that gives every request its own ``NotesCore/ManualRequestScope``.
    public static func makeRouter(services: ManualServices) -> Router<ManualRequestContext> {
        let router = Router(context: ManualRequestContext.self)
        router.add(middleware: ManualRequestScopeMiddleware(services: services))
        NotesAPI.addRoutes(to: router)
        return router
    }
}
