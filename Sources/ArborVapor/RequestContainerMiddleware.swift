#if Vapor
public import Arbor
import ArborPrimitives
public import Vapor

/// Gives every request a child of the app's root container, reachable as ``Vapor/Request/container``, and closes it
/// once the response has been written; at shutdown, closes the root.
///
/// Register the app's services once, in the root, and hand it to the app:
///
/// ```swift
/// let container = Container()
/// container.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
/// container.register(UnitOfWork.self) { r in UnitOfWork(database: try r.resolve(), user: try r.resolve()) }
///     .inObjectScope(.perContainer)                  // one per request
///     .onRelease { work in work.rollBackIfOpen() }   // runs when the request ends
///
/// app.useRequestContainers(root: container) { request, child in
///     // The request's own values, as instances of its child.
///     guard let name = request.headers.first(name: "X-User") else {
///         throw Abort(.unauthorized, reason: "Send the user in an X-User header.")
///     }
///     child.register(User.self, instance: User(name: name))
/// }
///
/// app.post("notes") { request in
///     let work = try request.container.resolve(UnitOfWork.self)   // this request's own
///     …
/// }
/// ```
///
/// `useRequestContainers` adds this middleware to `app.middleware` and to `app.lifecycle`. To give containers to
/// some routes only, make it yourself, with the same hook, and add it to a group, and to the lifecycle, which ends
/// the root at shutdown:
///
/// ```swift
/// let containers = RequestContainerMiddleware(root: container) { request, child in
///     guard let name = request.headers.first(name: "X-User") else {
///         throw Abort(.unauthorized, reason: "Send the user in an X-User header.")
///     }
///     child.register(User.self, instance: User(name: name))
/// }
/// app.lifecycle.use(containers)
/// let api = app.grouped(containers)
/// ```
///
/// What happens to a request:
///
/// - The child is made when the request first reads ``Vapor/Request/container``, and `register` runs on it then.
///   A request that a middleware or a handler rejects before it reads the container gets no child at all. If
///   `register` throws, the child is closed and reading the container throws that error (an `Abort` makes a 4xx).
/// - The child is closed once the response has been written to the connection, streamed bodies included, however
///   the handler made the stream (`Response.Body(stream:)`, `asyncStream:`, `managedAsyncStream:`, a file): a body
///   that resolves from `request.container` while it writes finds the container open (make it with
///   `managedAsyncStream:`, which ends the stream when a resolve throws). The middleware knows the response has been
///   written when Vapor lets it go.
/// - When the handler or a later middleware throws, the child is closed at once, and its release hooks, `async` ones
///   too, have run before the error goes on to the error middleware.
/// - Behind another `RequestContainerMiddleware` (the app's, and a group's own), the request's child is made in the
///   outer one's child, after that one's `register`, and both hooks' values are visible; it is closed with the outer
///   one's child, as the outer one's `releaseHooks` says. Its root must be the outer one's root or an ancestor of it;
///   otherwise reading the container throws ``RequestContainerError/unrelatedRoots``.
/// - Closing releases the child's per-container instances and runs their `onRelease` hooks, newest instance first;
///   `async` hooks run each after the one before, in a task of the child's. At an async shutdown the app waits for
///   the hooks of every closed request to finish, then closes the root and awaits its hooks. An app whose
///   per-request services have synchronous release hooks only can save that task: `releaseHooks: .synchronous`
///   closes the child on the event loop as the response goes.
public final class RequestContainerMiddleware: Middleware, LifecycleHandler {
    /// The app's container; each request gets a child of it.
    public let root: Container
    /// How a request's child is closed once its response has been written.
    public let releaseHooks: ReleaseHooks
    let register: (@Sendable (Request, Container) throws -> Void)?
    let closings = Closings()

    /// How a request's child is closed once its response has been written: awaiting its `async` release hooks in a
    /// task, or at once, on the event loop.
    ///
    /// ```swift
    /// app.useRequestContainers(root: container, releaseHooks: .synchronous)   // no request service has an async hook
    /// ```
    public enum ReleaseHooks: Sendable {
        /// Closes the child as `closeAndWait()` does: every release hook, `async` ones too, runs one after the other,
        /// newest instance first, and the app's async shutdown waits for them before it closes the root. When the
        /// child let go of instances with `async` hooks, they run in a task of their own; when every hook is
        /// synchronous, they run at once, on the thread that lets the response go, and no task is made. The default.
        case awaited
        /// Closes the child with `close()` on the thread that lets the response go, the connection's event loop:
        /// synchronous hooks run there and then; `async` ones, if any, start in a task of their own that shutdown
        /// does not wait for. For apps that would rather not pay for a task a request even when a per-request
        /// service has an `async` hook (a task's start and wake-ups of the concurrency runtime's threads cost far
        /// more than closing the child: measured on `Examples/NotesServer`, 6,500 instructions, and 20–40 µs of CPU
        /// a request with the kernel's share, on a busy 2-core machine). With synchronous hooks only, `.awaited`
        /// makes no task either.
        case synchronous
    }

    /// Makes the middleware.
    ///
    /// ```swift
    /// let containers = RequestContainerMiddleware(root: container) { request, child in
    ///     child.register(RequestID.self, instance: RequestID(request.id))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - root: The container every request's child is made from: usually the app's root, where the services are
    ///     registered. In a test, a child of the app's container that overrides some of them.
    ///   - releaseHooks: How a request's child is closed after its response: ``ReleaseHooks/awaited`` (the
    ///     default), or ``ReleaseHooks/synchronous`` when no per-request service has an `async` release hook.
    ///   - register: Registers the request's own values in its child when the child is made (the request's first
    ///     read of ``Vapor/Request/container``). An error it throws is what reading the container throws, and the
    ///     child is closed. It must not read `request.container` itself.
    public init(
        root: Container,
        releaseHooks: ReleaseHooks = .awaited,
        register: (@Sendable (_ request: Request, _ child: Container) throws -> Void)? = nil
    ) {
        self.root = root
        self.releaseHooks = releaseHooks
        self.register = register
    }

    /// Gives the request a place for its child container, and closes the child once the response has been written
    /// (or at once when the chain fails).
    public func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        // Behind another of these (the app's, and a group's own): the request's container is made inside the outer
        // one's, and ends with it.
        // `contains` first: `get` casts to the stored value's generic type, a metadata look-up that cost 1,182
        // instructions a request (callgrind, the notes server), and most requests go through one middleware only.
        let outer = request.storage.contains(RequestScope.Key.self) ? request.storage[RequestScope.Key.self] : nil
        let scope = RequestScope(middleware: self, outer: outer)
        request.storage[RequestScope.Key.self] = scope
        return next.respond(to: request).flatMapErrorWithEventLoop { error, eventLoop in
            guard let ended = scope.end() else { return eventLoop.makeFailedFuture(error) }
            return eventLoop.makeFutureWithTask {
                await ended.child.closeAndWait()
                withExtendedLifetime(ended) {}
                throw error
            }
        }.map { response in
            // A nested scope ends with the outer one's closer, which closes its child's subtree: a closer of its own
            // here would be replaced by the outer one's, and close the child before a streamed body is written.
            if outer == nil { response.storage[RequestScope.CloserKey.self] = RequestScope.Closer(scope) }
            return response
        }
    }

    /// At an async shutdown (`try await app.asyncShutdown()`): waits for the release hooks of the requests' closed
    /// containers to finish, then closes the root and awaits its release hooks.
    public func shutdownAsync(_ application: Application) async {
        await closings.waitForAll()
        await root.closeAndWait()
    }

    /// At a synchronous shutdown (`app.shutdown()`): closes the root; its `async` release hooks start in a task of
    /// their own.
    public func shutdown(_ application: Application) {
        root.close()
    }
}

extension Application {
    /// Gives every request a child of `root`, as ``Vapor/Request/container``, closed once its response has been
    /// written; and closes `root` when the application shuts down.
    ///
    /// ```swift
    /// app.useRequestContainers(root: container) { request, child in
    ///     child.register(RequestID.self, instance: RequestID(request.id))
    /// }
    /// app.get("notes", ":id") { request in
    ///     try request.container.resolve(NotesController.self).note(id: request.parameters.require("id"))
    /// }
    /// ```
    ///
    /// It adds a ``RequestContainerMiddleware`` to `middleware` (after the error middleware, so a request's errors
    /// become responses) and to `lifecycle`. See ``RequestContainerMiddleware`` for when children are made and
    /// closed. Call it once: a second call adds a second middleware, which every request goes through, and logs a
    /// warning that says so.
    ///
    /// - Parameters:
    ///   - root: The app's container, where its services are registered.
    ///   - position: Where in `middleware` to add it: `.end` (the default) or `.beginning`.
    ///   - releaseHooks: How a request's child is closed after its response; see
    ///     ``RequestContainerMiddleware/ReleaseHooks``.
    ///   - register: Registers the request's own values in its child when the child is made.
    /// - Returns: The middleware it added.
    @discardableResult
    public func useRequestContainers(
        root: Container,
        at position: Middlewares.Position = .end,
        releaseHooks: RequestContainerMiddleware.ReleaseHooks = .awaited,
        register: (@Sendable (_ request: Request, _ child: Container) throws -> Void)? = nil
    ) -> RequestContainerMiddleware {
        let middleware = RequestContainerMiddleware(root: root, releaseHooks: releaseHooks, register: register)
        if storage[RequestContainersInUse.self] != nil {
            logger.warning("\(RequestContainersInUse.secondCall)")
        }
        storage[RequestContainersInUse.self] = true
        self.middleware.use(middleware, at: position)
        lifecycle.use(middleware)
        return middleware
    }
}

/// Marks an application that `useRequestContainers` set up: a second call works (the requests go through both
/// middlewares) but is seldom meant, so it logs a warning.
enum RequestContainersInUse: StorageKey {
    typealias Value = Bool

    static let secondCall = """
        `useRequestContainers` was called a second time on this application: every request now goes through both \
        middlewares, and its child is made in the first one's child, after both hooks. Register all of a request's \
        values in one hook; for a route group's own values, add a `RequestContainerMiddleware` to the group instead.
        """
}

extension Request {
    /// The request's child container: resolve the request's services from it.
    ///
    /// ```swift
    /// app.get("notes") { request in
    ///     try request.container.resolve(NotesController.self).all()
    /// }
    /// ```
    ///
    /// Made on first use, from the root of the ``RequestContainerMiddleware`` the request went through, and closed
    /// once the response has been written. Its per-container instances (`.perContainer`) belong to this request;
    /// everything registered in the root is visible.
    ///
    /// Throws ``RequestContainerError`` when no ``RequestContainerMiddleware`` handled the request (a 500), and
    /// what the middleware's `register` threw, if it did.
    public var container: Container {
        get throws {
            guard let scope = storage[RequestScope.Key.self] else { throw RequestContainerError.noMiddleware }
            return try scope.container(for: self)
        }
    }
}

/// What ``Vapor/Request/container`` throws when the request has no container to give: the app is set up wrong, or a
/// task used the request after its response.
///
/// ```swift
/// app.middleware.use(RequestContainerMiddleware(root: container))   // before reading request.container
/// ```
///
/// Vapor's error middleware answers it with a 500 and logs it. The response carries ``reason`` outside release
/// builds, and "Something went wrong." in them: it is not an `AbortError`, whose reason every build would show, so
/// the app's setup is not described to clients.
public struct RequestContainerError: Error, CustomStringConvertible {
    /// Why there is no container, and what to do.
    public let reason: String

    /// The request went through no ``RequestContainerMiddleware``.
    public static let noMiddleware = RequestContainerError(
        reason: """
            The request has no container: add `app.useRequestContainers(root: container)` (or a \
            `RequestContainerMiddleware`) before the routes that read `request.container`.
            """)

    /// The request's response was written, or its handler failed, before it first read its container.
    public static let requestEnded = RequestContainerError(
        reason: """
            The request is over: read `request.container` while the request is handled (or while its body is \
            written), and keep what you resolve for later work instead.
            """)

    /// The middleware's `register` hook read `request.container`, which is the child it is registering in.
    public static let readInRegister = RequestContainerError(
        reason: """
            The `register` hook of `useRequestContainers` (or of a `RequestContainerMiddleware`) read \
            `request.container`: register in the `child` it is given instead.
            """)

    /// The request went through two middlewares, and the inner one's root is not the outer one's child's ancestor:
    /// the inner one makes its child in the outer one's, which would not see what the inner one's root registers.
    public static let unrelatedRoots = RequestContainerError(
        reason: """
            The request went through two `RequestContainerMiddleware`s whose roots are in different parts of the \
            tree: the inner one makes the request's container in the outer one's, so give it the outer one's root \
            (or an ancestor of it), or give the request one middleware.
            """)

    /// Says what to do.
    public var description: String { reason }
}

/// One request's child container: made on first use, closed when the request ends.
final class RequestScope: @unchecked Sendable {
    /// Where the request keeps its scope.
    struct Key: StorageKey {
        typealias Value = RequestScope
    }

    /// Where the response keeps its ``Closer``.
    struct CloserKey: StorageKey {
        typealias Value = Closer
    }

    /// Closes the scope when the response lets it go: once the response has been written.
    final class Closer: Sendable {
        let scope: RequestScope

        init(_ scope: RequestScope) {
            self.scope = scope
        }

        deinit {
            guard let ended = scope.end() else { return }
            switch scope.middleware.releaseHooks {
            case .awaited: scope.middleware.closings.close(ended.child)
            case .synchronous: ended.child.close()
            }
            withExtendedLifetime(ended) {}
        }
    }

    private enum State {
        case waiting
        case made(Container)
        case failed(any Error)
        case ended
    }

    private struct Guarded {
        var state = State.waiting
        /// The scopes of the middlewares the request went through after this one's: they end with this one. Each
        /// holds this scope as its `outer`; `end()`, which this scope's closer or its middleware's failure always
        /// calls, lets them go.
        var nested: [RequestScope] = []
    }

    let middleware: RequestContainerMiddleware
    /// The scope of the `RequestContainerMiddleware` the request went through before this one's, if any: this scope's
    /// child is made in that one's, and ends with it.
    private let outer: RequestScope?
    /// The state, behind a mutex held while the child is made and `register` runs on it: another thread that reads
    /// `request.container` meanwhile waits for the hook. Its first word is the thread making the child (0 when
    /// none), so that a hook that reads `request.container` gets an error instead of a deadlock. One allocation with
    /// the mutex; an `NSRecursiveLock` was two more, and cost about 500 instructions a request more (callgrind, the
    /// notes server).
    private let guarded = Protected.make(with: { Guarded() }, words: (0, 0, 0, 0))

    init(middleware: RequestContainerMiddleware, outer: RequestScope? = nil) {
        self.middleware = middleware
        self.outer = outer
        outer?.adopt(self)
    }

    private func adopt(_ scope: RequestScope) {
        guarded.withLock { $0.nested.append(scope) }
    }

    /// The request's child: made, and `register` run on it, on the first call. Behind another middleware, it is
    /// made in that one's child, which is made first.
    func container(for request: Request) throws -> Container {
        // Only this thread stores its own number there, and takes it away before it lets go of the lock.
        let thread = ThreadID.current.word
        if guarded.words.load() == thread { throw RequestContainerError.readInRegister }
        guarded.lock()
        defer { guarded.unlock() }
        switch guarded.withValueAssumingLocked({ $0.state }) {
        case .made(let child): return child
        case .failed(let error): throw error
        case .ended: throw RequestContainerError.requestEnded
        case .waiting: break
        }
        // The thread's number is there while the child is made, the outer scope's child too: an outer middleware's
        // hook, run from `parent(for:)`, that reads `request.container` reads this scope's.
        guarded.words.store(thread)
        let made = Result { () throws -> Container in
            let child = try parent(for: request).makeChild()
            do {
                try middleware.register?(request, child)
            } catch {
                child.close()
                throw error
            }
            return child
        }
        guarded.words.store(0)
        guarded.withValueAssumingLocked { guarded in
            switch made {
            case .success(let child): guarded.state = .made(child)
            case .failure(let error): guarded.state = .failed(error)
            }
        }
        return try made.get()
    }

    /// The container this scope's child is made in: the root, or behind another middleware that one's child, which
    /// must descend from the root (or be it) to see what the root registers.
    private func parent(for request: Request) throws -> Container {
        guard let outer else { return middleware.root }
        let outerChild = try outer.container(for: request)
        let root = middleware.root
        guard sequence(first: outerChild, next: \.parent).contains(where: { $0 === root }) else {
            throw RequestContainerError.unrelatedRoots
        }
        return outerChild
    }

    /// Ends the scope, and the scopes nested in it: returns the child to close, if one was made and not yet closed.
    /// Closing it closes the nested scopes' children too: they are its descendants.
    func end() -> Ended? {
        let (ended, nested) = guarded.withLock { guarded in
            defer { (guarded.state, guarded.nested) = (.ended, []) }
            return (guarded.state, guarded.nested)
        }
        // After the lock: a nested scope making its child holds its own lock, then takes this one's.
        let nestedChildren = nested.compactMap { $0.end() }
        guard case .made(let child) = ended else { return nil }
        return Ended(child: child, nested: nestedChildren)
    }

    /// An ended scope's child, to close, with the ended nested scopes' children, kept until it is closed: closing it
    /// closes them, and takes their instances to release with its own, newest first.
    struct Ended {
        let child: Container
        let nested: [Ended]
    }
}

/// The request containers being closed, so that shutdown can wait for their release hooks.
final class Closings: @unchecked Sendable {
    private let lock = NSLock()
    private var running = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Closes `child` and awaits its release hooks, in a task that shutdown waits for — or, when none of them is
    /// `async`, runs them here and now, which is what awaiting them would do, without the task.
    func close(_ child: Container) {
        guard let pending = child.closeWithoutSuspending() else { return }
        lock.withLock { running += 1 }
        Task {
            await pending.run()
            self.finished()
        }
    }

    private func finished() {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            running -= 1
            guard running == 0 else { return [] }
            defer { waiters = [] }
            return waiters
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once no closing is running.
    func waitForAll() async {
        await withCheckedContinuation { continuation in
            let isDone = lock.withLock { () -> Bool in
                if running == 0 { return true }
                waiters.append(continuation)
                return false
            }
            if isDone { continuation.resume() }
        }
    }
}
#else
/// Needs the package trait `Vapor`: depend on Arbor with `.package(url: "…", from: "…", traits: ["Vapor"])`.
@available(*, unavailable, message: "Enable Arbor's package trait \"Vapor\": traits: [\"Vapor\"]")
public final class RequestContainerMiddleware {
    /// Unavailable: enable the trait.
    public init(root: Any, releaseHooks: Any? = nil, register: Any? = nil) {}
}
#endif
