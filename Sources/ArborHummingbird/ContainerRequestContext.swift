#if Hummingbird
public import Arbor
public import Hummingbird

/// A request context that carries the request's own child container, which ``RequestContainerMiddleware`` makes.
///
/// Add one stored property to your context, and handlers resolve from ``container``:
///
/// ```swift
/// struct AppRequestContext: ContainerRequestContext {
///     var coreContext: CoreRequestContextStorage
///     var requestContainer: Container?
///
///     init(source: Source) {
///         self.coreContext = .init(source: source)
///     }
/// }
///
/// let router = Router(context: AppRequestContext.self)
/// router.add(middleware: RequestContainerMiddleware(root: appContainer))
/// router.get("/notes/:id") { request, context in
///     let notes = try await context.container.resolve(NotesController.self)   // built in this request's container
///     …
/// }
/// ```
///
/// Hummingbird makes the context before any middleware runs, so the property starts as `nil`;
/// ``RequestContainerMiddleware`` sets it for every route added after the middleware.
public protocol ContainerRequestContext: RequestContext {
    /// The request's child container, or `nil` before ``RequestContainerMiddleware`` has run. Read ``container``.
    var requestContainer: Container? { get set }
}

extension ContainerRequestContext {
    /// The request's child container: resolve the request's services from it.
    ///
    /// ```swift
    /// let work = try context.container.resolve(UnitOfWork.self)
    /// ```
    ///
    /// Its per-container instances (`.perContainer`) belong to this request; everything registered in the app's
    /// root container is visible. The middleware closes it once the response has been written.
    ///
    /// Throws ``MissingRequestContainer`` (a 500 response) when the route was added before
    /// ``RequestContainerMiddleware``, or without it.
    public var container: Container {
        get throws {
            guard let requestContainer else { throw MissingRequestContainer() }
            return requestContainer
        }
    }
}

/// The error ``ContainerRequestContext/container`` throws when no ``RequestContainerMiddleware`` ran for the
/// request: add the middleware to the router before the routes that use it.
///
/// ```swift
/// router.add(middleware: RequestContainerMiddleware(root: container))   // before the routes
/// ```
public struct MissingRequestContainer: HTTPResponseError, CustomStringConvertible {
    /// Makes the error.
    public init() {}

    /// A server error: the router is set up wrong.
    public var status: HTTPResponse.Status { .internalServerError }

    /// Says what to do.
    public var description: String {
        """
        The request has no container: add `router.add(middleware: RequestContainerMiddleware(root: container))` \
        before the routes that read `context.container`. In the middleware's `register` hook, use the `child` it \
        is given: the context gets the container once the hook has returned.
        """
    }

    /// The response: the status only, so the setup is not described to clients; the request's logger gets
    /// ``description`` at level `error`, for whoever runs the server.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        setupErrorResponse(status: status, description: description, context: context)
    }
}

/// The error ``RequestContainerMiddleware`` throws when a request went through two of them whose roots are in
/// different parts of the tree: the inner one makes its child in the outer one's, which must descend from its root.
///
/// ```swift
/// router.add(middleware: RequestContainerMiddleware(root: container))
/// router.group("admin").add(middleware: RequestContainerMiddleware(root: container) { request, context, child in
///     child.register(AdminSession.self, instance: AdminSession(request))   // beside the router's values
/// })
/// ```
public struct UnrelatedRequestContainerRoots: HTTPResponseError, CustomStringConvertible {
    /// Makes the error.
    public init() {}

    /// A server error: the router is set up wrong.
    public var status: HTTPResponse.Status { .internalServerError }

    /// Says what to do.
    public var description: String {
        """
        The request went through two `RequestContainerMiddleware`s whose roots are in different parts of the tree: \
        the inner one makes the request's container in the outer one's, so give it the outer one's root (or an \
        ancestor of it), or give the request one middleware.
        """
    }

    /// The response: the status only, so the setup is not described to clients; the request's logger gets
    /// ``description`` at level `error`, for whoever runs the server.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        setupErrorResponse(status: status, description: description, context: context)
    }
}

/// The response of an error in the server's setup: the status alone for the client, what to change in the request's
/// log. Hummingbird logs nothing for an error that makes its own response.
private func setupErrorResponse(
    status: HTTPResponse.Status, description: String, context: some RequestContext
) -> Response {
    context.logger.error("\(description)")
    return Response(status: status)
}
#else
/// Needs the package trait `Hummingbird`: depend on Arbor with
/// `.package(url: "…", from: "…", traits: ["Hummingbird"])`.
@available(*, unavailable, message: "Enable Arbor's package trait \"Hummingbird\": traits: [\"Hummingbird\"]")
public protocol ContainerRequestContext {}
#endif
