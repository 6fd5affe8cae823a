#if Vapor
import Arbor
import ArborTestSupport
import ArborTesting
import ArborVapor
import Testing
import Vapor
import VaporTesting

/// A per-container service: one per request's container.
final class Probe: Sendable {}

/// A permanent service of the root, released at shutdown.
final class Pool: Sendable {}

/// A per-container service made after a `Probe`, with an `async` release hook.
final class Journal: Sendable {}

/// What happened, in order, from any task.
final class Events: Sendable {
    private let events = Locked<[String]>([])

    func record(_ event: String) {
        events.withLock { $0.append(event) }
    }

    var all: [String] { events.withLock { $0 } }
}

/// A root whose per-container `Probe` records when it is made and released, and whose permanent `Pool` records
/// its release; and an app that gives each request a child of it.
struct Probes: Sendable {
    let events = Events()
    let releases = ReleaseRecorder()
    let root = Container()

    init() {
        let events = events
        root.register(Probe.self) { _ in
            events.record("made")
            return Probe()
        }
        .inObjectScope(.perContainer)
        .onRelease { _ in events.record("released") }
        .recordingReleases(in: releases)
        root.register(Pool.self) { _ in Pool() }.inObjectScope(.permanent).recordingReleases(in: releases)
    }

    /// Registers a per-container `Journal` in `root`, made after a `Probe` (so released before it), with an `async`
    /// release hook.
    func registerJournal(onRelease hook: @escaping @Sendable (Journal) async -> Void) {
        root.register(Journal.self) { r in
            _ = try r.resolve(Probe.self)
            return Journal()
        }
        .inObjectScope(.perContainer)
        .onRelease(hook)
    }

    /// Runs `test` with a Vapor test app that gives each request a child of `root`, and shuts it down after.
    func withApp(
        releaseHooks: RequestContainerMiddleware.ReleaseHooks = .awaited, _ test: (Application) async throws -> Void
    ) async throws {
        try await VaporTesting.withApp { app in
            app.useRequestContainers(root: root, releaseHooks: releaseHooks)
            try await test(app)
        }
    }
}

/// How a handler makes a streamed body: Vapor has three ways, and the container must stay open for each.
enum StreamKind: String, CaseIterable, Sendable {
    case stream, asyncStream, managedAsyncStream
}

/// Lets two requests wait for each other, so that they are handled at the same time.
actor Rendezvous {
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func arrive(expecting count: Int) async {
        arrived += 1
        if arrived == count {
            waiting.forEach { $0.resume() }
            waiting = []
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
    }
}

@Suite struct RequestContainerMiddlewareTests {
    @Test func aRequestsChildIsClosedAfterTheResponse() async throws {
        let probes = Probes()
        try await probes.withApp { app in
            app.get("probe") { request -> String in
                let container = try request.container
                #expect(try container.resolve(Probe.self) === container.resolve(Probe.self))
                return "ok"
            }
            try await app.testing().test(.GET, "probe") { response in
                #expect(response.status == .ok)
            }
            #expect(await probes.releases.wait(for: 1))
            #expect(probes.events.all == ["made", "released"])
        }
    }

    /// The body is written after the handler has returned; it resolves from the request's container for every
    /// chunk, and the container closes after the last one, whichever way the stream was made.
    @Test(arguments: StreamKind.allCases, [RequestContainerMiddleware.ReleaseHooks.awaited, .synchronous])
    func aStreamedBodyKeepsTheChildOpenUntilItEnds(
        kind: StreamKind, releaseHooks: RequestContainerMiddleware.ReleaseHooks
    ) async throws {
        let probes = Probes()
        try await probes.withApp(releaseHooks: releaseHooks) { app in
            app.get("stream") { request -> Response in
                let container = try request.container
                _ = try container.resolve(Probe.self)
                @Sendable func chunk(_ number: Int) throws -> ByteBuffer {
                    _ = try container.resolve(Probe.self)  // throws once the container is closed
                    probes.events.record("chunk \(number), closed: \(container.isClosed)")
                    return ByteBuffer(string: "\(number)\n")
                }
                switch kind {
                case .stream:
                    return Response(
                        body: .init(stream: { writer in
                            do {
                                let buffers = try (1...3).map(chunk)
                                _ = buffers.reduce(request.eventLoop.makeSucceededVoidFuture()) { written, buffer in
                                    written.flatMap { writer.write(.buffer(buffer)) }
                                }
                                .flatMap { writer.write(.end) }
                            } catch {
                                writer.write(.error(error), promise: nil)
                            }
                        }))
                case .asyncStream:
                    return Response(
                        body: .init(asyncStream: { writer in
                            for number in 1...3 { try await writer.write(.buffer(try chunk(number))) }
                            try await writer.write(.end)
                        }))
                case .managedAsyncStream:
                    return Response(
                        body: .init(managedAsyncStream: { writer in
                            for number in 1...3 { try await writer.write(.buffer(try chunk(number))) }
                        }))
                }
            }
            try await app.testing(method: .running(port: 0)).test(.GET, "stream") { response in
                #expect(response.body.string == "1\n2\n3\n")
            }
            #expect(await probes.releases.wait(for: 1))
            #expect(
                probes.events.all == [
                    "made", "chunk 1, closed: false", "chunk 2, closed: false", "chunk 3, closed: false", "released",
                ])
        }
    }

    /// A client that goes away in the middle of a streamed body: the body's next write fails, and the child is
    /// closed, its release hooks run, though the body was never finished.
    @Test(
        arguments: [StreamKind.asyncStream, .managedAsyncStream],
        [RequestContainerMiddleware.ReleaseHooks.awaited, .synchronous])
    func aClientThatLeavesMidBodyGetsItsChildClosed(
        kind: StreamKind, releaseHooks: RequestContainerMiddleware.ReleaseHooks
    ) async throws {
        let probes = Probes()
        let kept = Locked<Container?>(nil)
        try await probes.withApp(releaseHooks: releaseHooks) { app in
            app.get("endless") { request -> Response in
                let container = try request.container
                kept.withLock { $0 = container }
                _ = try container.resolve(Probe.self)
                // Chunks until a write fails, which it does once the client has gone (its socket reset).
                @Sendable func writeUntilItFails(_ write: (ByteBuffer) async throws -> Void) async throws {
                    try await write(ByteBuffer(string: "first\n"))
                    probes.events.record("wrote first")
                    do {
                        while true { try await write(ByteBuffer(repeating: UInt8(ascii: "x"), count: 16_384)) }
                    } catch {
                        probes.events.record("a write failed, closed: \(container.isClosed)")
                        throw error
                    }
                }
                switch kind {
                case .asyncStream:
                    return Response(
                        body: .init(asyncStream: { writer in
                            do {
                                try await writeUntilItFails { try await writer.write(.buffer($0)) }
                            } catch {
                                try await writer.write(.error(error))  // how Vapor asks such a stream to end
                            }
                        }))
                default:
                    return Response(
                        body: .init(managedAsyncStream: { writer in
                            try await writeUntilItFails { try await writer.write(.buffer($0)) }
                        }))
                }
            }
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            let port = try #require(app.http.server.shared.localAddress?.port)
            #expect(await LeavingClient.get("/endless", port: port, leavingAfter: "first\n"))
            #expect(await probes.releases.wait(for: 1))
            #expect(probes.events.all == ["made", "wrote first", "a write failed, closed: false", "released"])
            #expect(kept.withLock { $0?.isClosed } == true)
            await app.server.shutdown()
        }
    }

    /// With `.synchronous`, the child is closed as Vapor lets the response go, on that thread: an in-memory
    /// request's hooks have run by the time the client has the response.
    @Test func synchronousClosingRunsTheHooksAsTheResponseGoes() async throws {
        let probes = Probes()
        try await probes.withApp(releaseHooks: .synchronous) { app in
            app.get("probe") { request -> String in
                _ = try request.container.resolve(Probe.self)
                return "ok"
            }
            try await app.testing().test(.GET, "probe") { response in
                #expect(response.status == .ok)
                #expect(probes.events.all == ["made", "released"])  // already: no waiting
            }
        }
    }

    /// A handler that throws: the child is closed, and its release hooks have run, before the error becomes a
    /// response.
    @Test func aFailingHandlerClosesTheChild() async throws {
        let probes = Probes()
        try await probes.withApp { app in
            app.get("fail") { request -> String in
                _ = try request.container.resolve(Probe.self)
                throw Abort(.conflict, reason: "Taken.")
            }
            try await app.testing().test(.GET, "fail") { response in
                #expect(response.status == .conflict)
                #expect(response.body.string.contains("Taken."))
                #expect(probes.events.all == ["made", "released"])  // already: no waiting
            }
        }
    }

    /// A request's `async` release hooks run after its response, one after the other, newest instance first; the
    /// app's async shutdown waits for them, then closes the root.
    @Test func asyncReleaseHooksRunNewestFirstAndShutdownWaitsForThem() async throws {
        let probes = Probes()
        probes.registerJournal { _ in
            // Long enough for a shutdown that did not wait to close the root first.
            try? await Task.sleep(nanoseconds: 50_000_000)
            probes.events.record("journal released")
        }
        _ = try await probes.root.resolve(Pool.self)
        try await probes.withApp { app in
            app.get("journal") { request -> String in
                _ = try request.container.resolve(Journal.self)
                return "ok"
            }
            try await app.testing().test(.GET, "journal") { response in
                #expect(response.status == .ok)
            }
        }
        #expect(probes.events.all == ["made", "journal released", "released"])
        #expect(probes.releases.released == ["Probe", "Pool"])
    }

    /// A handler that throws: the child's release hooks, the `async` ones too, have run before the error becomes a
    /// response.
    @Test func aFailingHandlersAsyncReleaseHooksHaveRunBeforeItsResponse() async throws {
        let probes = Probes()
        probes.registerJournal { _ in
            await Task.yield()
            probes.events.record("journal released")
        }
        try await probes.withApp { app in
            app.get("fail") { request -> String in
                _ = try request.container.resolve(Journal.self)
                throw Abort(.conflict, reason: "Taken.")
            }
            try await app.testing().test(.GET, "fail") { response in
                #expect(response.status == .conflict)
                #expect(probes.events.all == ["made", "journal released", "released"])  // already: no waiting
            }
        }
    }

    @Test func twoConcurrentRequestsGetSeparateInstances() async throws {
        let probes = Probes()
        let rendezvous = Rendezvous()
        try await probes.withApp { app in
            app.get("probe") { request -> String in
                let probe = try await request.container.resolve(Probe.self)
                await rendezvous.arrive(expecting: 2)  // both requests hold their probe now
                #expect(try await request.container.resolve(Probe.self) === probe)
                return "\(ObjectIdentifier(probe).hashValue)"
            }
            let tester = try app.testing()
            async let first = tester.sendRequest(.GET, "probe")
            async let second = tester.sendRequest(.GET, "probe")
            let (one, two) = try await (first, second)
            #expect(one.status == .ok && two.status == .ok)
            #expect(one.body.string != two.body.string)
            #expect(await probes.releases.wait(for: 2))
            #expect(probes.events.all == ["made", "made", "released", "released"])
        }
    }

    /// A test overrides a service in a child of the app's container (`ArborTesting.overriding`), and serves
    /// with the child as the root: requests see the override, the app's container is untouched.
    @Test func overridesReachARequest() async throws {
        let app = Container()
        app.register(String.self, name: "greeting") { _ in "hello" }
        let test = ArborTesting.overriding(app) { child in
            child.register(String.self, name: "greeting") { _ in "hello from the test" }
        }
        try await withApp { server in
            server.useRequestContainers(root: test)
            server.get("greet") { request in try request.container.resolve(String.self, name: "greeting") }
            try await server.testing().test(.GET, "greet") { response in
                #expect(response.body.string == "hello from the test")
            }
        }
        #expect(try await app.resolve(String.self, name: "greeting") == "hello")
        #expect(test.isClosed)  // the server closed its root at shutdown; `app`, its parent, is open
        #expect(!app.isClosed)
    }

    /// The app closes the root it is given when it shuts down, so tests that share one container give each app a
    /// child of it (`ArborTesting.overriding(shared)`): the second app serves as the first did, and the shared
    /// container stays open.
    @Test func testsThatShareAContainerGiveEachAppAChildOfIt() async throws {
        let shared = Container()
        shared.register(String.self, name: "greeting") { _ in "hello" }
        var roots: [Container] = []
        for _ in 0..<2 {
            let root = ArborTesting.overriding(shared)
            roots.append(root)
            try await withApp { server in
                server.useRequestContainers(root: root)
                server.get("greet") { request in try request.container.resolve(String.self, name: "greeting") }
                try await server.testing().test(.GET, "greet") { response in
                    #expect(response.status == .ok)
                    #expect(response.body.string == "hello")
                }
            }
        }
        #expect(roots.map(\.isClosed) == [true, true])
        #expect(!shared.isClosed)
    }

    /// The hook registers the request's own values; when it throws, the request gets the error, and the child it
    /// was given is closed.
    @Test func theHookRegistersTheRequestsValues() async throws {
        let children = Locked<[Container]>([])
        try await withApp { app in
            app.useRequestContainers(root: Container()) { request, child in
                children.withLock { $0.append(child) }
                guard let user = request.headers.first(name: "X-User") else {
                    throw Abort(.unauthorized, reason: "Send the user in an X-User header.")
                }
                child.register(String.self, name: "user", instance: user)
            }
            app.get("me") { request in try request.container.resolve(String.self, name: "user") }
            try await app.testing().test(.GET, "me", headers: ["X-User": "ann"]) { response in
                #expect(response.body.string == "ann")
            }
            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .unauthorized)
                #expect(response.body.string.contains("Send the user in an X-User header."))
            }
        }
        let made = children.withLock { $0 }
        #expect(made.count == 2)
        #expect(made.allSatisfy { $0.isClosed })
    }

    /// A middleware after the containers' rejects the request before the handler reads its container: no child
    /// is made.
    @Test func aRejectedRequestGetsNoChild() async throws {
        let made = Locked(0)
        try await withApp { app in
            app.useRequestContainers(root: Container()) { _, _ in made.withLock { $0 += 1 } }
            let guarded = app.grouped(RequireUser())
            guarded.get("me") { request in
                _ = try request.container
                return "ok"
            }
            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .unauthorized)
            }
            #expect(made.withLock { $0 } == 0)
            try await app.testing().test(.GET, "me", headers: ["X-User": "ann"]) { response in
                #expect(response.status == .ok)
            }
            #expect(made.withLock { $0 } == 1)
        }
    }

    /// The app's shutdown closes the root, and awaits its release hooks.
    @Test func shutdownClosesTheRoot() async throws {
        let probes = Probes()
        _ = try await probes.root.resolve(Pool.self)
        try await probes.withApp { _ in
            #expect(!probes.root.isClosed)
        }
        #expect(probes.root.isClosed)
        #expect(probes.releases.released == ["Pool"])
    }

    /// A hook that reads `request.container` (the child it is filling) gets an error that says what to do,
    /// instead of waiting for itself. Behind a group's middleware too, where the app's hook runs while the group's
    /// child, which the request's container is, waits for the app's child.
    @Test(arguments: [false, true])
    func aHookThatReadsTheRequestsContainerIsTold(behindAGroupsMiddleware: Bool) async throws {
        try await withApp { app in
            let root = Container()
            app.useRequestContainers(root: root) { request, _ in _ = try request.container }
            let routes: any RoutesBuilder =
                behindAGroupsMiddleware ? app.grouped(RequestContainerMiddleware(root: root)) : app
            routes.get("me") { request -> String in
                _ = try request.container
                return "unreachable"
            }
            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .internalServerError)
                #expect(response.body.string.contains("register in the `child` it is given instead"))
            }
        }
    }

    /// Threads of one request that read `request.container` while the hook fills it wait for the hook, and all get
    /// the one child it filled: the hook runs once.
    @Test func threadsThatReadTheContainerWhileTheHookRunsWaitForIt() async throws {
        let hooks = Locked(0)
        try await VaporTesting.withApp { app in
            app.useRequestContainers(root: Container()) { _, child in
                hooks.withLock { $0 += 1 }
                // Long enough for the other threads to come to the container while this one fills it.
                Thread.sleep(forTimeInterval: 0.05)
                child.register(String.self, instance: "filled")
            }
            app.get("me") { request -> String in
                let children = Locked<[ObjectIdentifier]>([])
                let values = Locked<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 4) { _ in
                    guard let child = try? request.container else { return }
                    children.withLock { $0.append(ObjectIdentifier(child)) }
                    if let value = try? child.resolve(String.self) { values.withLock { $0.append(value) } }
                }
                let distinct = Set(children.withLock { $0 }).count
                return "\(children.withLock { $0.count }) \(distinct) \(values.withLock { $0 }.joined(separator: ","))"
            }
            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .ok)
                #expect(response.body.string == "4 1 filled,filled,filled,filled")
            }
        }
        #expect(hooks.withLock { $0 } == 1)
    }

    /// A middleware made by hand, with its hook, on a route group and the lifecycle: the group's requests get
    /// children with their values, closed after the response; a route outside the group is told what to add; the
    /// app's shutdown closes the root.
    @Test func aRouteGroupWithItsOwnMiddleware() async throws {
        let root = Container()
        let children = Locked<[Container]>([])
        try await VaporTesting.withApp { app in
            let containers = RequestContainerMiddleware(root: root) { request, child in
                children.withLock { $0.append(child) }
                guard let user = request.headers.first(name: "X-User") else {
                    throw Abort(.unauthorized, reason: "Send the user in an X-User header.")
                }
                child.register(String.self, name: "user", instance: user)
            }
            app.lifecycle.use(containers)
            let api = app.grouped(containers)
            api.get("me") { request in try request.container.resolve(String.self, name: "user") }
            app.get("outside") { request -> String in
                _ = try request.container
                return "unreachable"
            }
            try await app.testing().test(.GET, "me", headers: ["X-User": "ann"]) { response in
                #expect(response.status == .ok)
                #expect(response.body.string == "ann")
            }
            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .unauthorized)
            }
            try await app.testing().test(.GET, "outside", headers: ["X-User": "ann"]) { response in
                #expect(response.status == .internalServerError)
                #expect(response.body.string.contains("useRequestContainers"))
            }
            #expect(!root.isClosed)
        }
        let made = children.withLock { $0 }
        #expect(made.count == 2)
        #expect(made.allSatisfy { $0.isClosed })
        #expect(root.isClosed)
    }

    /// A group with a middleware of its own, behind the app's: its requests get a child of the app's child, with both
    /// hooks' values and a per-container instance of their own, and a streamed body finds it open until it ends
    /// (a closer of the group's own was once replaced by the app's, and closed the child as the response went).
    @Test(arguments: [RequestContainerMiddleware.ReleaseHooks.awaited, .synchronous])
    func aGroupsMiddlewareNestsItsChildInTheAppsChild(
        releaseHooks: RequestContainerMiddleware.ReleaseHooks
    )
        async throws
    {
        let probes = Probes()
        let children = Locked<[String: Container]>([:])
        try await VaporTesting.withApp { app in
            app.useRequestContainers(root: probes.root, releaseHooks: releaseHooks) { request, child in
                children.withLock { $0["app"] = child }
                guard let user = request.headers.first(name: "X-User") else {
                    throw Abort(.unauthorized, reason: "Send the user in an X-User header.")
                }
                child.register(String.self, name: "user", instance: user)
            }
            let admin = app.grouped(
                RequestContainerMiddleware(root: probes.root) { _, child in
                    children.withLock { $0["group"] = child }
                    child.register(String.self, name: "role", instance: "admin")
                })
            admin.get("me") { request -> Response in
                let container = try request.container
                let line =
                    "\(try container.resolve(String.self, name: "user")) "
                    + (try container.resolve(String.self, name: "role"))
                _ = try container.resolve(Probe.self)
                return Response(
                    body: .init(asyncStream: { writer in
                        do {
                            _ = try await container.resolve(Probe.self)  // throws once the container is closed
                            probes.events.record("body, closed: \(container.isClosed)")
                            try await writer.write(.buffer(ByteBuffer(string: line)))
                            try await writer.write(.end)
                        } catch {
                            probes.events.record("body failed: \(error)")
                            try await writer.write(.error(error))
                        }
                    }))
            }
            try await app.testing(method: .running(port: 0)).test(.GET, "me", headers: ["X-User": "ann"]) { response in
                #expect(response.body.string == "ann admin")
            }
            #expect(await probes.releases.wait(for: 1))
            #expect(probes.events.all == ["made", "body, closed: false", "released"])
            let made = children.withLock { $0 }
            let (outer, inner) = (try #require(made["app"]), try #require(made["group"]))
            #expect(inner.parent === outer)
            #expect(inner.isClosed && outer.isClosed)

            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    /// A group's middleware whose root is not an ancestor of the app's child answers 500 with what to do, and the
    /// app's child is closed.
    @Test func aGroupsMiddlewareWithAnUnrelatedRootAnswers500WithWhatToDo() async throws {
        let children = Locked<[Container]>([])
        try await VaporTesting.withApp { app in
            app.useRequestContainers(root: Container()) { _, child in children.withLock { $0.append(child) } }
            let admin = app.grouped(RequestContainerMiddleware(root: Container()))
            admin.get("me") { request -> String in
                _ = try request.container
                return "unreachable"
            }
            try await app.testing().test(.GET, "me") { response in
                #expect(response.status == .internalServerError)
                #expect(response.body.string.contains("give it the outer one's root"))
            }
        }
        let made = children.withLock { $0 }
        #expect(made.count == 1)
        #expect(made.allSatisfy { $0.isClosed })
    }

    /// Vapor's error middleware shows an error's text in a release build only for an `AbortError` or a
    /// `DebuggableError`; for any other error it answers "Something went wrong." there (a debug build, as tests are,
    /// shows the text). The setup error is neither, so a release build keeps the app's setup from clients; and it is
    /// logged with what to do.
    @Test func theSetupErrorIsOneVaporHidesInReleaseBuildsAndLogs() async throws {
        for error in [RequestContainerError.noMiddleware, .requestEnded, .readInRegister, .unrelatedRoots] {
            #expect(!(error is any AbortError))
            #expect(!(error is any DebuggableError))
        }
        let log = WarningLog()
        try await VaporTesting.withApp { app in
            app.logger = log.logger
            app.get("orphan") { request -> String in
                _ = try request.container
                return "unreachable"
            }
            try await app.testing().test(.GET, "orphan") { response in
                #expect(response.status == .internalServerError)
            }
        }
        #expect(log.all.contains { $0.contains("add `app.useRequestContainers(root: container)`") })
    }

    /// A second `useRequestContainers` works as two middlewares do, and says so in the log, once.
    @Test func aSecondUseRequestContainersLogsAWarning() async throws {
        let log = WarningLog()
        try await VaporTesting.withApp { app in
            app.logger = log.logger
            let root = Container()
            app.useRequestContainers(root: root) { _, child in child.register(String.self, instance: "first") }
            #expect(log.all.isEmpty)
            app.useRequestContainers(root: root)
            app.get("depth") { request -> String in
                let child = try request.container
                return "\(try child.resolve(String.self)) \(child.parent?.parent === root)"
            }
            try await app.testing().test(.GET, "depth") { response in
                #expect(response.body.string == "first true")
            }
        }
        #expect(log.all.count == 1)
        #expect(log.all.first?.hasPrefix("`useRequestContainers` was called a second time on this application") == true)
    }

    @Test func aRouteWithoutTheMiddlewareAnswers500WithWhatToDo() async throws {
        try await withApp { app in
            app.get("orphan") { request -> String in
                _ = try request.container
                return "unreachable"
            }
            try await app.testing().test(.GET, "orphan") { response in
                #expect(response.status == .internalServerError)
                #expect(response.body.string.contains("useRequestContainers"))
            }
        }
    }
}

/// Keeps the messages logged at level `warning` or above, from any task: where Vapor reports an error.
/// (`ArborHummingbirdTests` has the same at level `error`: the test targets share no module that depends on swift-log,
/// and `ArborTestSupport` taking it on would add a package to the manifest for twenty lines of a test.)
final class WarningLog: Sendable {
    private let messages = Locked<[String]>([])

    var all: [String] { messages.withLock { $0 } }

    /// A logger whose warnings and errors go to this log.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    private struct Handler: LogHandler {
        let log: WarningLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.level >= .warning else { return }
            log.messages.withLock { $0.append("\(event.message)") }
        }
    }
}

/// Rejects a request without an `X-User` header, without reading its container.
struct RequireUser: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.headers.first(name: "X-User") != nil else { throw Abort(.unauthorized) }
        return try await next.respond(to: request)
    }
}
#endif
