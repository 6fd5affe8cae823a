import Foundation
import Testing

@testable import Arbor

private struct User: Equatable, Sendable {
    let name: String
}

private protocol RequestID: Sendable {
    var value: String { get }
}

private struct Trace: RequestID {
    let value: String
}

private final class Connection: Sendable {
    let id: Int
    init(id: Int) { self.id = id }
}

/// A request's handler, graph-scoped in the app's root, built from the request's two values.
private final class Handler: Sendable {
    let user: User
    let id: any RequestID
    init(user: User, id: any RequestID) {
        self.user = user
        self.id = id
    }
    var summary: String { "\(user.name) \(id.value)" }
}

private func makeApp() -> Container {
    let app = Container()
    app.register(Handler.self) { r in Handler(user: try r.resolve(), id: try r.resolve()) }
    return app
}

/// A request's child of `app` with its two values: kept as they were given, or — `filed` — made into registrations
/// at once, as anything but a nested resolve does (here `isRegistered`).
private func request(of app: Container, user: String = "ann", filed: Bool) -> Container {
    let child = app.makeChild()
    child.register(User.self, instance: User(name: user))
    child.register((any RequestID).self, instance: Trace(value: "t-\(user)"))
    if filed { _ = child.isRegistered(User.self) }
    return child
}

/// What `body` returned, or the reason of the `ResolutionError` it threw.
private func outcome(_ body: () throws -> String) -> String {
    do {
        return try body()
    } catch let error as ResolutionError {
        return "error: \(error.reason)"
    } catch {
        return "error: \(error)"
    }
}

extension Container {
    fileprivate var keepsInstancesPending: Bool { registry.withLock { !$0.pending.isEmpty } }
}

/// Records the events of the keys a test names, as text.
private final class EventLog: ResolutionObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var events: [String] { lock.withLock { lines } }
    private func add(_ line: String) { lock.withLock { lines.append(line) } }

    func instanceBuilt(_ event: InstanceBuilt) { add("built \(event.key) at \(event.depth)") }
    func instanceReused(_ event: InstanceReused) { add("reused \(event.key) at \(event.depth) from \(event.source)") }
    func instanceReleased(_ event: InstanceReleased) { add("released \(event.key)") }
}

/// Instances registered in a request's child before anything looked it up — the request's values — are kept as they
/// were given (`PendingInstance`) until something needs them as registrations. They must behave as instance
/// registrations in every way.
@Suite struct PendingInstanceTests {
    @Test func aRequestsValuesResolveInItsGraphAndStayAsTheyWereGiven() throws {
        let app = makeApp()
        let request = request(of: app, filed: false)
        #expect(request.keepsInstancesPending)

        #expect(try request.resolve(Handler.self).summary == "ann t-ann")
        #expect(try request.resolve(Handler.self).summary == "ann t-ann")
        // Nested resolves read them where they are.
        #expect(request.keepsInstancesPending)
    }

    @Test func aTopLevelResolveReadsThemAsTheyAre() throws {
        let request = request(of: makeApp(), filed: false)
        #expect(try request.resolve(User.self) == User(name: "ann"))
        #expect(try request.resolve((any RequestID).self).value == "t-ann")
        #expect(try request.resolve(Handler.self).summary == "ann t-ann")
        #expect(request.keepsInstancesPending)

        // Not under another type, a name or arguments: those are not registered.
        #expect(throws: ResolutionError.self) { try request.resolve(Trace.self) }
        #expect(throws: ResolutionError.self) { try request.resolve(User.self, name: "ann") }
        #expect(throws: ResolutionError.self) { try request.resolve(User.self, arguments: 1) }

        request.close()
        #expect(throws: ResolutionError.self) { try request.resolve(User.self) }
    }

    @Test func aTopLevelAsyncResolveReadsThemAsTheyAre() async throws {
        let request = request(of: makeApp(), filed: false)
        #expect(try await request.resolve(User.self) == User(name: "ann"))
        #expect(try await request.resolve((any RequestID).self).value == "t-ann")
        #expect(request.keepsInstancesPending)
        await #expect(throws: ResolutionError.self) { try await request.resolve(Trace.self) }

        request.close()
        await #expect(throws: ResolutionError.self) { try await request.resolve(User.self) }
    }

    @Test func everythingButAResolveFilesThemAsTheRegistrationsTheyAre() throws {
        let operations: [(String, (Container) throws -> Void)] = [
            ("isRegistered", { _ = $0.isRegistered(User.self) }),
            ("resolveAll", { _ = try $0.resolveAll(User.self) }),
            ("an optional resolve", { _ = try $0.resolve(User?.self) }),
            ("a factory registered", { $0.register(Connection.self) { _ in Connection(id: 1) } }),
            ("a third instance", { $0.register(Connection.self, instance: Connection(id: 1)) }),
            ("validate()", { #expect($0.validate().isValid) }),
            ("resetObjectScope(.permanent)", { $0.resetObjectScope(.permanent) }),
            ("resetInstance(of:)", { $0.resetInstance(of: User.self) }),
            (
                "an observer's resolve",
                { container in
                    container.addObserver(EventLog())
                    _ = try container.resolve(Handler.self)
                }
            ),
            ("a grandchild's resolve", { _ = try $0.makeChild().resolve(Handler.self) }),
        ]
        for (name, operation) in operations {
            let request = request(of: makeApp(), filed: false)
            try operation(request)
            #expect(!request.keepsInstancesPending, "\(name)")
            #expect(try request.resolve(Handler.self).summary == "ann t-ann", "\(name)")
            #expect(request.isRegistered(User.self), "\(name)")
        }
    }

    /// Each scenario, on a request whose values are pending and on one whose values are filed: the same outcome.
    @Test func pendingAndFiledInstancesBehaveAlike() throws {
        let scenarios: [(String, (Container, Container) throws -> String)] = [
            ("resolve", { _, request in try request.resolve(Handler.self).summary }),
            (
                "the values at the top level",
                { _, request in
                    let user = try request.resolve(User.self).name
                    let id = try request.resolve((any RequestID).self).value
                    return "\(user) \(id), \(try request.resolve(Handler.self).summary)"
                }
            ),
            (
                "a value at the top level, closed",
                { _, request in
                    request.close()
                    return outcome { try request.resolve(User.self).name }
                }
            ),
            (
                "a value at the top level with a name",
                { _, request in outcome { try request.resolve(User.self, name: "ann").name } }
            ),
            (
                "registered again",
                { _, request in
                    request.register(User.self, instance: User(name: "bob"))
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "replaced by a factory",
                { _, request in
                    request.register(User.self) { _ in User(name: "cy") }
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "a third value",
                { _, request in
                    let connection = Connection(id: 7)
                    request.register(Connection.self, instance: connection)
                    let handler = try request.resolve(Handler.self).summary
                    return "\(handler) \(try request.resolve(Connection.self) === connection)"
                }
            ),
            (
                "closed",
                { _, request in
                    request.close()
                    return "\(request.isRegistered(User.self)) " + outcome { try request.resolve(Handler.self).summary }
                }
            ),
            (
                "depth limit 0",
                { _, request in
                    request.maxResolutionDepth = 0
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "unregistered",
                { _, request in
                    request.unregister(User.self)
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "removeAll",
                { _, request in
                    request.removeAll()
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "reset",
                { _, request in
                    request.resetObjectScope(.permanent)
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "the root's own user",
                { app, request in
                    app.register(User.self, instance: User(name: "root"))
                    return try "\(request.resolve(Handler.self).summary), \(app.resolve(User.self).name)"
                }
            ),
            (
                "a grandchild",
                { _, request in
                    let inner = request.makeChild()
                    let overriding = request.makeChild()
                    overriding.register(User.self, instance: User(name: "dee"))
                    return try "\(inner.resolve(Handler.self).summary), \(overriding.resolve(Handler.self).summary)"
                }
            ),
            (
                "a release hook",
                { _, request in
                    let released = Recorder()
                    request.register(Connection.self, instance: Connection(id: 3))
                        .onRelease { connection in released.record("\(connection.id)") }
                    _ = try request.resolve(Handler.self)
                    request.close()
                    request.close()
                    return "\(released.events)"
                }
            ),
            (
                "a forward",
                { _, request in
                    request.register(Trace.self, instance: Trace(value: "fwd")).implements((any RequestID).self)
                    return try request.resolve(Handler.self).summary
                }
            ),
            (
                "a per-container service",
                { app, request in
                    app.register(Connection.self) { r in Connection(id: try r.resolve(User.self).name.count) }
                        .inObjectScope(.perContainer)
                    return "\(try request.resolve(Connection.self).id)"
                }
            ),
            (
                "closed while the graph is built",
                { app, request in
                    app.register(Connection.self) { r in
                        request.close()
                        return Connection(id: try r.resolve(User.self).name.count)
                    }
                    return "\(try request.resolve(Connection.self).id)"
                }
            ),
            (
                "an observer",
                { _, request in
                    let log = EventLog()
                    request.addObserver(log)
                    _ = try request.resolve(Handler.self)
                    _ = try request.resolve(User.self)
                    request.close()
                    return log.events.joined(separator: "; ")
                }
            ),
        ]
        for (name, scenario) in scenarios {
            let results = [false, true].map { filed in
                let app = makeApp()
                let request = request(of: app, filed: filed)
                #expect(request.keepsInstancesPending == !filed, "\(name)")
                return outcome { try scenario(app, request) }
            }
            #expect(results[0] == results[1], "\(name): pending, then filed")
        }
    }

    @Test func anAsyncResolveFindsThemThroughSynchronousAndAsyncFactories() async throws {
        let app = makeApp()
        app.register(Connection.self) { r async throws in Connection(id: try await r.resolve(User.self).name.count) }
        let request = request(of: app, user: "anna", filed: false)
        #expect(try await request.resolve(Handler.self).summary == "anna t-anna")
        #expect(try await request.resolve(Connection.self).id == 4)
        #expect(try await request.resolve(Handler.self).summary == "anna t-anna")
    }

    @Test func aValueGoesWithItsContainer() {
        weak var released: Connection?
        var request: Container? = makeApp().makeChild()
        do {
            let connection = Connection(id: 1)
            released = connection
            request?.register(Connection.self, instance: connection)
        }
        #expect(request?.keepsInstancesPending == true)
        #expect(released != nil)
        request = nil
        #expect(released == nil)
    }

    /// Threads resolve a request's graph while others file its values, register another and close it: each resolve
    /// gets the request's own values, or throws because the request closed.
    @Test func resolvesRacingWithFilingRegisteringAndClosingGetTheRequestsOwnValues() {
        let problems = ProblemLog()
        let app = makeApp()
        for round in 0..<200 {
            let name = "user\(round)"
            let request = request(of: app, user: name, filed: false)
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                switch worker {
                case 0, 1:
                    for _ in 0..<20 {
                        do {
                            let handler = try request.resolve(Handler.self)
                            problems.check(handler.summary == "\(name) t-\(name)", "got \(handler.summary) in \(name)")
                            let user = try request.resolve(User.self)
                            problems.check(user.name == name, "got \(user.name) in \(name)")
                        } catch let error as ResolutionError {
                            if case .containerClosed = error.reason { continue }
                            problems.record("\(error)")
                        } catch {
                            problems.record("\(error)")
                        }
                    }
                case 2:
                    _ = request.isRegistered(User.self)
                    request.register(Connection.self, instance: Connection(id: round))
                default:
                    request.close()
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.summary)")
    }
}
