#if Hummingbird
public import Arbor
public import Hummingbird

/// Gives every request a child of the app's root container, and closes it once the response has been written.
///
/// Register the app's services once, in the root, and add the middleware before the routes:
///
/// ```swift
/// let container = Container()
/// container.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
/// container.register(UnitOfWork.self) { r in UnitOfWork(database: try r.resolve()) }
///     .inObjectScope(.perContainer)                  // one per request
///     .onRelease { work in work.rollBackIfOpen() }   // runs when the request ends
///
/// let router = Router(context: AppRequestContext.self)   // a ContainerRequestContext
/// router.add(middleware: RequestContainerMiddleware(root: container) { request, context, child in
///     // The request's own values, as instances of its child. An HTTPError it throws is the response.
///     guard let name = request.headers[.init("X-User")!] else {
///         throw HTTPError(.unauthorized, message: "Send the user in an X-User header.")
///     }
///     child.register(User.self, instance: User(name: name))
/// })
/// router.post("/notes") { request, context in
///     let work = try await context.container.resolve(UnitOfWork.self)   // this request's own
///     …
/// }
/// ```
///
/// For each request the middleware makes `root.makeChild()`, runs `register` on it, stores it in the context's
/// ``ContainerRequestContext/requestContainer``, and calls the next responder. When the request ends, the child is
/// closed with `closeAndWait()`, which releases its per-container instances and awaits their `onRelease` hooks,
/// `async` ones too (a transaction rolled back before the response ends):
///
/// - after the response body has been written to the connection, streamed bodies included: a body that resolves
///   from `context.container` while it writes finds the container open;
/// - after the body failed to write (the client went away, or the body threw), before the error goes on;
/// - at once, when `register`, the handler or a later middleware throws instead of returning a response. A
///   ``/Arbor/ResolutionError`` thrown that way, a mistake in the wiring, is logged at level `error` with what to
///   do (Hummingbird itself logs an error it does not know at level `debug`), and answered 500.
///
/// Behind another `RequestContainerMiddleware` (the router's, and a group's own), the request's child is made in the
/// outer one's child, after that one's `register`: both hooks' values are visible, and the inner child is closed
/// first, once the body has been written, then the outer one. Its root must be the outer one's root or an ancestor
/// of it; otherwise the request fails with ``UnrelatedRequestContainerRoots``.
///
/// A request that a middleware added before this one rejects never gets a child: put authentication and other
/// checks that need no services first.
///
/// A response whose body is never written — replaced by a middleware added before this one, or dropped — closes
/// nothing: the child is released with the body, and a container that is released without `close()` still
/// releases its per-container instances and runs their `onRelease` hooks (in its `deinit`).
public struct RequestContainerMiddleware<Context: ContainerRequestContext>: RouterMiddleware {
    /// The app's container; each request gets a child of it.
    public let root: Container
    private let register: (@Sendable (Request, Context, Container) throws -> Void)?

    /// Makes the middleware.
    ///
    /// ```swift
    /// router.add(middleware: RequestContainerMiddleware(root: container))
    /// ```
    ///
    /// - Parameters:
    ///   - root: The container every request's child is made from: usually the app's root, where the services are
    ///     registered. In a test, a child of the app's container that overrides some of them.
    ///   - register: Registers the request's own values in its child, before any handler runs: the user it is
    ///     for, an identifier to log. An error it throws ends the request with that error (throw an `HTTPError`
    ///     for a 4xx; another error is a 500), and the child is closed. Register in `child`: the context gets the
    ///     container once the hook has returned.
    public init(
        root: Container,
        register: (@Sendable (_ request: Request, _ context: Context, _ child: Container) throws -> Void)? = nil
    ) {
        self.root = root
        self.register = register
    }

    /// Runs the rest of the chain with a new child container in the context, and closes the child when the
    /// response has been written (or when the chain throws).
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let outer = context.requestContainer
        let container = try parent(outer: outer).makeChild()
        var context = context
        var response: Response
        do {
            try register?(request, context, container)
            context.requestContainer = container
            response = try await next(request, context)
        } catch {
            await container.closeAndWait()
            // Hummingbird logs an error that is not an `HTTPResponseError` at level debug only, and a wiring mistake
            // would go unseen: the outermost middleware logs it, once.
            if outer == nil, let error = error as? ResolutionError {
                context.logger.error("A request failed to resolve a service, and was answered 500: \(error)")
            }
            throw error
        }
        response.body = response.body.closing(container)
        return response
    }

    /// Where the request's child is made: the root, or, behind another `RequestContainerMiddleware` (whose child is
    /// `outer`), that one's child, which must descend from the root (or be it) to see what the root registers.
    private func parent(outer: Container?) throws -> Container {
        guard let outer else { return root }
        guard sequence(first: outer, next: \.parent).contains(where: { $0 === root }) else {
            throw UnrelatedRequestContainerRoots()
        }
        return outer
    }
}

extension ResponseBody {
    /// The same body, with the same length, that closes `container` once it has been written, or once writing it
    /// has failed, and awaits its release hooks (`async` ones too) before the response ends.
    fileprivate func closing(_ container: Container) -> ResponseBody {
        ResponseBody(contentLength: contentLength) { writer in
            do {
                try await self.write(writer)
            } catch {
                await container.closeAndWait()
                throw error
            }
            // Calls an `async` function only for `async` release hooks: `closeAndWait()` here cost a
            // `swift_task_switch` a request (see `Container.closeWithoutSuspending()`).
            await container.closeWithoutSuspending()?.run()
        }
    }
}
#else
/// Needs the package trait `Hummingbird`: depend on Arbor with
/// `.package(url: "…", from: "…", traits: ["Hummingbird"])`.
@available(*, unavailable, message: "Enable Arbor's package trait \"Hummingbird\": traits: [\"Hummingbird\"]")
public struct RequestContainerMiddleware<Context> {
    /// Unavailable: enable the trait.
    public init(root: Any, register: Any? = nil) {}
}
#endif
