#if Hummingbird
import Arbor
import ArborHummingbird
import ArborTestSupport
import ArborTesting
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// The smallest context that carries a request container.
struct TestContext: ContainerRequestContext {
    var coreContext: CoreRequestContextStorage
    var requestContainer: Container?

    init(source: Source) {
        self.coreContext = .init(source: source)
    }
}

/// A per-container service that records when it is made and released.
final class Probe: Sendable {}

/// Holds the container a route saw, for the test to look at after the request.
final class ContainerBox: Sendable {
    private let strong = Locked<Container?>(nil)
    private let weakly = Locked(WeakContainer())

    private struct WeakContainer {
        weak var container: Container?
    }

    func keep(_ container: Container) { strong.withLock { $0 = container } }
    func watch(_ container: Container) { weakly.withLock { $0.container = container } }
    var kept: Container? { strong.withLock { $0 } }
    var watched: Container? { weakly.withLock { $0.container } }
}

struct BodyFailed: Error {}

/// What happened, in order, from any task; a release also goes to `releases`, which a test can wait for.
final class Events: Sendable {
    private let events = Locked<[String]>([])
    let releases = ReleaseRecorder()

    func record(_ event: String) {
        events.withLock { $0.append(event) }
    }

    var all: [String] { events.withLock { $0 } }
}

/// A service no test registers.
private struct Unregistered { let name: String }

/// Keeps the messages logged at level `error` or above, from any task.
final class ErrorLog: Sendable {
    private let messages = Locked<[String]>([])

    var all: [String] { messages.withLock { $0 } }

    /// A logger whose errors go to this log.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    private struct Handler: LogHandler {
        let log: ErrorLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.level >= .error else { return }
            log.messages.withLock { $0.append("\(event.message)") }
        }
    }
}

/// Replaces every response's body, so the original is never written.
struct ReplaceBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.body = ResponseBody(byteBuffer: ByteBuffer(string: "replaced"))
        return response
    }
}

@Suite struct RequestContainerMiddlewareTests {
    /// A router with the middleware and one route, `path`, that keeps its request's container in `box`, resolves a
    /// `Probe` from it, and answers with a body that `write` writes.
    func streamingRouter(
        _ path: RouterPath, events: Events, keepingIn box: ContainerBox,
        write: @escaping @Sendable (inout any ResponseBodyWriter, Container) async throws -> Void
    ) -> Router<TestContext> {
        let router = Router(context: TestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: makeRoot(events)))
        router.get(path) { _, context in
            let container = try context.container
            box.keep(container)
            _ = try container.resolve(Probe.self)
            return Response(status: .ok, body: ResponseBody { writer in try await write(&writer, container) })
        }
        return router
    }

    func makeRoot(_ events: Events) -> Container {
        let root = Container()
        root.register(Probe.self) { _ in
            events.record("made")
            return Probe()
        }
        .inObjectScope(.perContainer)
        .onRelease { _ in events.record("released") }
        .recordingReleases(in: events.releases)
        return root
    }

    /// A streamed body resolves from the request's container while it is written; the container closes after
    /// the last chunk, and not before.
    @Test(arguments: [TestingSetup.router, .live])
    func aStreamedBodyFindsTheContainerOpen(setup: TestingSetup) async throws {
        let events = Events()
        let router = Router(context: TestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: makeRoot(events)))
        router.get("/stream") { _, context in
            let container = try context.container
            _ = try container.resolve(Probe.self)
            return Response(
                status: .ok,
                body: ResponseBody { writer in
                    for chunk in 1...3 {
                        _ = try await container.resolve(Probe.self)  // throws once the container is closed
                        events.record("chunk \(chunk), closed: \(container.isClosed)")
                        try await writer.write(ByteBuffer(string: "\(chunk)\n"))
                    }
                    try await writer.finish(nil)
                    events.record("finished")
                })
        }
        try await Application(router: router).test(setup) { client in
            let response = try await client.execute(uri: "/stream", method: .get)
            #expect(String(buffer: response.body) == "1\n2\n3\n")
            // A live server closes the container once it has written the response, maybe after the client has
            // read it.
            #expect(await events.releases.wait(for: 1))
        }
        #expect(
            events.all == [
                "made", "chunk 1, closed: false", "chunk 2, closed: false", "chunk 3, closed: false", "finished",
                "released",
            ])
    }

    /// Release hooks run in order, newest instance first, the `async` ones awaited, all before the response ends;
    /// with only synchronous ones, before it ends too, without the body's task suspending for them.
    @Test(arguments: [true, false])
    func releaseHooksHaveRunWhenTheResponseEnds(withAnAsyncHook: Bool) async throws {
        let events = Events()
        let root = makeRoot(events)
        final class Journal: Sendable {}
        let journal = root.register(Journal.self) { r in
            _ = try r.resolve(Probe.self)  // made first, released last
            return Journal()
        }
        .inObjectScope(.perContainer)
        if withAnAsyncHook {
            journal.onRelease { _ async in
                await Task.yield()
                events.record("journal released")
            }
        } else {
            journal.onRelease { _ in events.record("journal released") }
        }
        let router = Router(context: TestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: root))
        router.get("/journal") { _, context -> String in
            _ = try context.container.resolve(Journal.self)
            return "ok"
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/journal", method: .get)
            #expect(response.status == .ok)
            #expect(events.all == ["made", "journal released", "released"])
        }
    }

    @Test func aThrowingHandlerClosesTheContainerAtOnce() async throws {
        let events = Events()
        let box = ContainerBox()
        let router = Router(context: TestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: makeRoot(events)))
        router.get("/fail") { _, context -> HTTPResponse.Status in
            let container = try context.container
            box.keep(container)
            _ = try container.resolve(Probe.self)
            throw HTTPError(.conflict)
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/fail", method: .get)
            #expect(response.status == .conflict)
        }
        #expect(events.all == ["made", "released"])
        #expect(box.kept?.isClosed == true)
    }

    /// A client that goes away in the middle of a streamed body: the body's next write fails, and the container is
    /// closed, its release hooks run, though the body never finished.
    @Test func aClientThatLeavesMidBodyGetsItsContainerClosed() async throws {
        let events = Events()
        let box = ContainerBox()
        let router = streamingRouter("/endless", events: events, keepingIn: box) { writer, container in
            try await writer.write(ByteBuffer(string: "first\n"))
            events.record("wrote first")
            do {
                // Chunks until a write fails, which it does once the client has gone (its socket reset).
                while true { try await writer.write(ByteBuffer(repeating: UInt8(ascii: "x"), count: 16_384)) }
            } catch {
                events.record("a write failed, closed: \(container.isClosed)")
                throw error
            }
        }
        try await Application(router: router).test(.live) { client in
            let port = try #require(client.port)
            #expect(await LeavingClient.get("/endless", port: port, leavingAfter: "first\n"))
            #expect(await events.releases.wait(for: 1))
        }
        #expect(events.all == ["made", "wrote first", "a write failed, closed: false", "released"])
        #expect(box.kept?.isClosed == true)
    }

    @Test func aBodyThatFailsToWriteClosesTheContainer() async throws {
        let events = Events()
        let box = ContainerBox()
        let router = streamingRouter("/broken", events: events, keepingIn: box) { writer, _ in
            try await writer.write(ByteBuffer(string: "half"))
            events.record("wrote half")
            throw BodyFailed()
        }
        try await Application(router: router).test(.router) { client in
            await #expect(throws: BodyFailed.self) { try await client.execute(uri: "/broken", method: .get) }
            #expect(events.all.contains("wrote half"))
        }
        #expect(events.all == ["made", "wrote half", "released"])
        #expect(box.kept?.isClosed == true)
    }

    /// A body that is never written closes nothing: the container goes with it, and its deinit releases the
    /// per-container instances, running their `onRelease` hooks.
    @Test func aBodyNeverWrittenReleasesTheContainer() async throws {
        let events = Events()
        let box = ContainerBox()
        let router = Router(context: TestContext.self)
        router.add(middleware: ReplaceBodyMiddleware())
        router.add(middleware: RequestContainerMiddleware(root: makeRoot(events)))
        router.get("/replaced") { _, context in
            let container = try context.container
            box.watch(container)
            _ = try container.resolve(Probe.self)
            return "original"
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/replaced", method: .get)
            #expect(String(buffer: response.body) == "replaced")
        }
        #expect(events.all == ["made", "released"])
        #expect(box.watched == nil)
    }

    @Test func aRouteWithoutTheMiddlewareAnswers500() async throws {
        let router = Router(context: TestContext.self)
        router.get("/orphan") { _, context in
            _ = try context.container
            return "unreachable"
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/orphan", method: .get)
            #expect(response.status == .internalServerError)
        }
    }
}

extension RequestContainerMiddlewareTests {
    /// The request's own values, registered by the middleware's hook, reach the handler; a hook that throws ends the
    /// request with its error, and its child is closed.
    @Test func theHookRegistersTheRequestsValues() async throws {
        let events = Events()
        let box = ContainerBox()
        let router = Router(context: TestContext.self)
        router.add(
            middleware: RequestContainerMiddleware(root: makeRoot(events)) { request, _, child in
                box.keep(child)
                guard let user = request.headers[.init("X-User")!] else {
                    throw HTTPError(.unauthorized, message: "Send the user in an X-User header.")
                }
                child.register(String.self, name: "user", instance: user)
                _ = try child.resolve(Probe.self)
            })
        router.get("/me") { _, context in
            try context.container.resolve(String.self, name: "user")
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/me", method: .get, headers: [.init("X-User")!: "ann"])
            #expect(String(buffer: response.body) == "ann")
            #expect(events.releases.released.count == 1)

            let rejected = try await client.execute(uri: "/me", method: .get)
            #expect(rejected.status == .unauthorized)
            #expect(String(buffer: rejected.body).contains("Send the user in an X-User header."))
        }
        // The rejected request's child was made, and closed before the error response; it resolved nothing.
        #expect(events.all == ["made", "released"])
        #expect(box.kept?.isClosed == true)
    }
    /// A group with a middleware of its own, behind the router's: its requests get a child of the router's child, with
    /// both hooks' values and a per-container instance of their own; a streamed body finds it open; the inner child
    /// closes after the body, then the outer one.
    @Test func aGroupsMiddlewareNestsItsChildInTheRoutersChild() async throws {
        let events = Events()
        let root = makeRoot(events)
        let outer = ContainerBox()
        let inner = ContainerBox()
        let router = Router(context: TestContext.self)
        router.add(
            middleware: RequestContainerMiddleware(root: root) { request, _, child in
                outer.keep(child)
                guard let user = request.headers[.init("X-User")!] else {
                    throw HTTPError(.unauthorized, message: "Send the user in an X-User header.")
                }
                child.register(String.self, name: "user", instance: user)
            })
        let admin = router.group("admin")
        admin.add(
            middleware: RequestContainerMiddleware(root: root) { _, _, child in
                inner.keep(child)
                child.register(String.self, name: "role", instance: "admin")
            })
        admin.get("/me") { _, context in
            let container = try context.container
            let user = try container.resolve(String.self, name: "user")
            let role = try container.resolve(String.self, name: "role")
            _ = try container.resolve(Probe.self)
            return Response(
                status: .ok,
                body: ResponseBody { writer in
                    _ = try await container.resolve(Probe.self)  // throws once the container is closed
                    events.record("body, closed: \(container.isClosed)")
                    try await writer.write(ByteBuffer(string: "\(user) \(role)"))
                    try await writer.finish(nil)
                })
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(
                uri: "/admin/me", method: .get, headers: [.init("X-User")!: "ann"])
            #expect(String(buffer: response.body) == "ann admin")
            #expect(await events.releases.wait(for: 1))
            let (outerChild, innerChild) = (try #require(outer.kept), try #require(inner.kept))
            #expect(innerChild.parent === outerChild)
            #expect(innerChild.isClosed && outerChild.isClosed)

            let rejected = try await client.execute(uri: "/admin/me", method: .get)
            #expect(rejected.status == .unauthorized)
        }
        #expect(events.all == ["made", "body, closed: false", "released"])
        #expect(!root.isClosed)
    }

    /// A group's middleware whose root is not an ancestor of the router's child fails the request with a 500 that
    /// says what to do, and the router's child is closed.
    @Test func aGroupsMiddlewareWithAnUnrelatedRootAnswers500() async throws {
        let events = Events()
        let outer = ContainerBox()
        let router = Router(context: TestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: makeRoot(events)) { _, _, child in outer.keep(child) })
        let admin = router.group("admin")
        admin.add(middleware: RequestContainerMiddleware(root: Container()))
        admin.get("/me") { _, _ in "unreachable" }
        let log = ErrorLog()
        try await Application(router: router, logger: log.logger).test(.router) { client in
            let response = try await client.execute(uri: "/admin/me", method: .get)
            #expect(response.status == .internalServerError)
            #expect(response.body.readableBytes == 0)
        }
        #expect(try #require(outer.kept).isClosed)
        #expect(log.all == [UnrelatedRequestContainerRoots().description])
        #expect(UnrelatedRequestContainerRoots().description.contains("give it the outer one's root"))
    }

    /// A service that does not resolve is a mistake in the wiring: the client gets a bare 500, and the log says what
    /// failed, once, however many middlewares the request went through.
    @Test func aResolutionErrorIsLoggedOnceAsAnError() async throws {
        let root = Container()
        let router = Router(context: TestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: root))
        let admin = router.group("admin")
        admin.add(middleware: RequestContainerMiddleware(root: root) { _, _, _ in })
        router.get("/user") { _, context in try context.container.resolve(Unregistered.self).name }
        admin.get("/user") { _, context in try context.container.resolve(Unregistered.self).name }
        let log = ErrorLog()
        try await Application(router: router, logger: log.logger).test(.router) { client in
            for uri in ["/user", "/admin/user"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .internalServerError)
                #expect(response.body.readableBytes == 0)
            }
        }
        #expect(log.all.count == 2)
        for message in log.all {
            #expect(message.hasPrefix("A request failed to resolve a service, and was answered 500: "))
            #expect(message.contains("Arbor could not resolve Unregistered: nothing is registered under that key."))
        }
    }

    /// The hook registers in the child it is given; the context has no container yet, and the log says so.
    @Test func aHookThatReadsTheContextsContainerIsToldToUseItsChild() async throws {
        let router = Router(context: TestContext.self)
        router.add(
            middleware: RequestContainerMiddleware(root: Container()) { _, context, _ in
                _ = try context.container
            })
        router.get("/") { _, _ in "unreachable" }
        let log = ErrorLog()
        try await Application(router: router, logger: log.logger).test(.router) { client in
            let response = try await client.execute(uri: "/", method: .get)
            #expect(response.status == .internalServerError)
        }
        #expect(log.all == [MissingRequestContainer().description])
        #expect(MissingRequestContainer().description.contains("In the middleware's `register` hook, use the `child`"))
    }

    /// A route added before the middleware reads no container: the client gets a bare 500, and the server's log says
    /// where the middleware goes.
    @Test func aRouteBeforeTheMiddlewareAnswers500AndLogsWhatToDo() async throws {
        let router = Router(context: TestContext.self)
        router.get("/early") { _, context in
            _ = try context.container
            return "unreachable"
        }
        router.add(middleware: RequestContainerMiddleware(root: Container()))
        router.get("/late") { _, context in
            try context.container.isClosed ? "closed" : "open"
        }
        let log = ErrorLog()
        try await Application(router: router, logger: log.logger).test(.router) { client in
            let early = try await client.execute(uri: "/early", method: .get)
            #expect(early.status == .internalServerError)
            #expect(early.body.readableBytes == 0)
            let late = try await client.execute(uri: "/late", method: .get)
            #expect(String(buffer: late.body) == "open")
        }
        #expect(log.all == [MissingRequestContainer().description])
        #expect(MissingRequestContainer().description.contains("RequestContainerMiddleware(root:"))
    }
}
#endif
