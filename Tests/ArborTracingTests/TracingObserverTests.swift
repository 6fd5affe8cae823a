#if Tracing
import Arbor
import ArborTestSupport
@testable import ArborTracing
import Foundation
import InMemoryTracing
import Testing
import Tracing

// The spans a `TracingObserver` reports to an `InMemoryTracer`: which factories get one, how they nest, what they
// say. Slow factories sleep longer than the threshold (a sleep lasts at least as long as asked); fast ones do next
// to nothing, far below it, even on a busy machine. Durations are checked from below, never against a deadline.

private let threshold = Duration.milliseconds(100)
private let slow = 150

private final class Database: Sendable {}
private final class Repository: Sendable {
    let database: Database
    init(database: Database) { self.database = database }
}
private final class Analytics: Sendable {}
private final class Settings: Sendable {}
private final class AppModel: Sendable {
    let repository: Repository
    let analytics: Analytics
    init(repository: Repository, analytics: Analytics) {
        self.repository = repository
        self.analytics = analytics
    }
}
private final class Session: Sendable {}
private struct Broken: Error, CustomStringConvertible {
    var description: String { "the disk is full" }
}

private func sleep(milliseconds: Int) {
    Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
}

/// AppModel (fast itself) → Repository (slow) → Database (slow, permanent); AppModel → Analytics (fast).
private func app() -> Container {
    let container = Container()
    container.register(Database.self) { _ in
        sleep(milliseconds: slow)
        return Database()
    }
    .inObjectScope(.permanent)
    container.register(Repository.self) { r in
        sleep(milliseconds: slow)
        return Repository(database: try r.resolve(Database.self))
    }
    container.register(Analytics.self) { _ in Analytics() }
    container.register(AppModel.self) { r in
        AppModel(repository: try r.resolve(Repository.self), analytics: try r.resolve(Analytics.self))
    }
    return container
}

/// The same graph with `async` factories that suspend while they are slow.
private func asyncApp() -> Container {
    let container = Container()
    container.register(Database.self) { _ async throws in
        try await Task.sleep(for: .milliseconds(slow))
        return Database()
    }
    .inObjectScope(.permanent)
    container.register(Repository.self) { r async throws in
        try await Task.sleep(for: .milliseconds(slow))
        return Repository(database: try await r.resolve(Database.self))
    }
    container.register(Analytics.self) { _ in Analytics() }
    container.register(AppModel.self) { r async throws in
        AppModel(
            repository: try await r.resolve(Repository.self), analytics: try await r.resolve(Analytics.self))
    }
    return container
}

/// Every finished span, by name; a name that occurs more than once keeps its first span.
private struct Spans {
    let all: [FinishedInMemorySpan]

    init(_ tracer: InMemoryTracer) {
        all = tracer.finishedSpans
    }

    subscript(name: String) -> FinishedInMemorySpan? {
        all.first { $0.operationName == name }
    }

    var names: Set<String> { Set(all.map(\.operationName)) }

    func named(_ name: String) throws -> FinishedInMemorySpan {
        try #require(self[name], "no span named \(name) in \(names.sorted())")
    }

    func children(of span: FinishedInMemorySpan) -> [FinishedInMemorySpan] {
        all.filter { $0.parentSpanID == span.spanID }
    }
}

extension FinishedInMemorySpan {
    var duration: Duration {
        let nanoseconds = endInstant.nanosecondsSinceEpoch - startInstant.nanosecondsSinceEpoch
        return .nanoseconds(Int64(nanoseconds))
    }

    /// Whether `other` ran within this span.
    func encloses(_ other: FinishedInMemorySpan) -> Bool {
        startInstant.nanosecondsSinceEpoch <= other.startInstant.nanosecondsSinceEpoch
            && other.endInstant.nanosecondsSinceEpoch <= endInstant.nanosecondsSinceEpoch
    }

    func isChild(of parent: FinishedInMemorySpan) -> Bool {
        parentSpanID == parent.spanID && traceID == parent.traceID
    }
}

@Suite("TracingObserver")
struct TracingObserverTests {
    @Test("a sync resolve: a span for the resolve and for each slow factory, nested as the resolution nested")
    func syncResolve() throws {
        let tracer = InMemoryTracer()
        let container = app()
        let observer = TracingObserver(tracer: tracer, threshold: threshold)
        container.addObserver(observer)
        _ = try container.resolve(AppModel.self)

        let spans = Spans(tracer)
        // Analytics was fast: no span. AppModel's own time includes Repository's: a span.
        #expect(spans.names == ["resolve AppModel", "AppModel", "Repository", "Database"])
        let resolve = try spans.named("resolve AppModel")
        let model = try spans.named("AppModel")
        let repository = try spans.named("Repository")
        let database = try spans.named("Database")
        #expect(resolve.parentSpanID == nil, "no span was current: the resolve starts a trace")
        #expect(model.isChild(of: resolve))
        #expect(repository.isChild(of: model))
        #expect(database.isChild(of: repository))
        #expect(spans.all.allSatisfy { $0.kind == .internal })
        // The instants are those at which each ran.
        #expect(database.duration >= .milliseconds(slow))
        #expect(repository.duration >= .milliseconds(2 * slow))
        #expect(resolve.encloses(model) && model.encloses(repository) && repository.encloses(database))
        #expect(resolve.errors.isEmpty && resolve.status == nil)
        #expect(observer.resolvesUnderWay == 0, "a finished resolve leaves nothing behind")
    }

    @Test("the spans' attributes: key, container, scope, depth, keeper, path, async")
    func attributes() throws {
        let tracer = InMemoryTracer()
        let container = app()
        container.register(Session.self, name: "admin") { _ in
            sleep(milliseconds: slow)
            return Session()
        }
        container.addObserver(TracingObserver(tracer: tracer, threshold: threshold))
        _ = try container.resolve(AppModel.self)
        _ = try container.resolve(Session.self, name: "admin")

        let spans = Spans(tracer)
        let resolve = try spans.named("resolve AppModel").attributes
        #expect(resolve.get("arbor.key") == .string("AppModel"))
        #expect(resolve.get("arbor.container") == .string("root"))
        #expect(resolve.get("arbor.async") == .bool(false))
        let model = try spans.named("AppModel").attributes
        #expect(model.get("arbor.key") == .string("AppModel"))
        #expect(model.get("arbor.scope") == .string("graph"))
        #expect(model.get("arbor.depth") == .int64(0))
        #expect(model.get("arbor.keeper") == nil, "no container keeps a graph-scoped instance")
        #expect(model.get("arbor.path") == .stringArray(["AppModel"]))
        #expect(model.get("arbor.async") == .bool(false))
        let database = try spans.named("Database").attributes
        #expect(database.get("arbor.scope") == .string("permanent"))
        #expect(database.get("arbor.depth") == .int64(2))
        #expect(database.get("arbor.keeper") == .string("root"))
        #expect(database.get("arbor.path") == .stringArray(["AppModel", "Repository", "Database"]))
        // A named service: its key as Arbor writes it.
        let named = try spans.named(#"resolve Session(name: "admin")"#)
        #expect(named.attributes.get("arbor.key") == .string(#"Session(name: "admin")"#))
        #expect(try spans.named(#"Session(name: "admin")"#).attributes.get("arbor.depth") == .int64(0))
    }

    @Test("an async resolve: the same spans, nested, marked async")
    func asyncResolve() async throws {
        let tracer = InMemoryTracer()
        let container = asyncApp()
        let observer = TracingObserver(tracer: tracer, threshold: threshold)
        container.addObserver(observer)
        _ = try await container.resolve(AppModel.self)

        let spans = Spans(tracer)
        #expect(spans.names == ["resolve AppModel", "AppModel", "Repository", "Database"])
        let resolve = try spans.named("resolve AppModel")
        let model = try spans.named("AppModel")
        let repository = try spans.named("Repository")
        let database = try spans.named("Database")
        #expect(model.isChild(of: resolve) && repository.isChild(of: model) && database.isChild(of: repository))
        #expect(database.duration >= .milliseconds(slow))
        #expect(repository.duration >= .milliseconds(2 * slow))
        #expect(spans.all.allSatisfy { $0.attributes.get("arbor.async") == .bool(true) })
        #expect(observer.resolvesUnderWay == 0)
    }

    @Test("a slow factory under fast ones hangs from the slow factory above it; threshold zero traces every factory")
    func onlySlowFactories() throws {
        // AppModel → Repository (fast) → Database (slow): Repository's time includes Database's, so it has a span.
        // Analytics is fast, and a leaf: none.
        let container = Container()
        container.register(Database.self) { _ in
            sleep(milliseconds: slow)
            return Database()
        }
        container.register(Repository.self) { r in Repository(database: try r.resolve(Database.self)) }
        container.register(Analytics.self) { _ in Analytics() }
        container.register(AppModel.self) { r in
            AppModel(repository: try r.resolve(Repository.self), analytics: try r.resolve(Analytics.self))
        }
        let tracer = InMemoryTracer()
        let observer = TracingObserver(tracer: tracer, threshold: threshold)
        container.addObserver(observer)
        _ = try container.resolve(Analytics.self)  // fast: the resolve's span only
        #expect(Spans(tracer).names == ["resolve Analytics"])
        tracer.clearAll()

        _ = try container.resolve(AppModel.self)
        var spans = Spans(tracer)
        #expect(spans.names == ["resolve AppModel", "AppModel", "Repository", "Database"])
        #expect(try spans.named("Database").isChild(of: spans.named("Repository")))
        tracer.clearAll()

        container.removeObserver(observer)
        container.addObserver(TracingObserver(tracer: tracer, threshold: .zero))
        _ = try container.resolve(AppModel.self)
        spans = Spans(tracer)
        #expect(spans.names == ["resolve AppModel", "AppModel", "Repository", "Database", "Analytics"])
        #expect(try spans.named("Analytics").isChild(of: spans.named("AppModel")))
    }

    @Test("slow initCompleted hooks are spans of the resolve, and what they resolve hangs from them")
    func hooks() throws {
        let container = Container()
        container.register(Settings.self) { _ in
            sleep(milliseconds: slow)
            return Settings()
        }
        container.register(Analytics.self) { _ in Analytics() }
        container.register(Database.self) { r in
            _ = try r.resolve(Analytics.self)
            return Database()
        }
        .initCompleted { r, _ in
            _ = try r.resolve(Settings.self)
        }
        let tracer = InMemoryTracer()
        container.addObserver(TracingObserver(tracer: tracer, threshold: threshold))
        _ = try container.resolve(Database.self)

        let spans = Spans(tracer)
        #expect(spans.names == ["resolve Database", "initCompleted Database", "Settings"])
        let resolve = try spans.named("resolve Database")
        let hooks = try spans.named("initCompleted Database")
        let settings = try spans.named("Settings")
        #expect(hooks.isChild(of: resolve))
        #expect(settings.isChild(of: hooks))
        #expect(hooks.attributes.get("arbor.depth") == .int64(0))
        #expect(settings.attributes.get("arbor.depth") == .int64(1))
        #expect(hooks.duration >= .milliseconds(slow))
    }

    @Test("a resolve that throws records its error on its span, whose status is error")
    func failure() throws {
        let container = app()
        container.register(Settings.self) { r in
            _ = try r.resolve(Repository.self)
            throw Broken()
        }
        let tracer = InMemoryTracer()
        let observer = TracingObserver(tracer: tracer, threshold: threshold)
        container.addObserver(observer)
        #expect(throws: (any Error).self) { try container.resolve(Settings.self) }

        let spans = Spans(tracer)
        let resolve = try spans.named("resolve Settings")
        #expect(resolve.status?.code == .error)
        #expect(resolve.errors.count == 1)
        #expect(String(describing: try #require(resolve.errors.first).error).contains("the disk is full"))
        // The slow factories that returned before it threw are there; the factory that threw built nothing.
        #expect(spans.names == ["resolve Settings", "Repository", "Database"])
        #expect(try spans.named("Repository").isChild(of: resolve))
        #expect(spans.all.filter { $0.operationName != "resolve Settings" }.allSatisfy { $0.errors.isEmpty })
        #expect(observer.resolvesUnderWay == 0)
    }

    @Test("a resolve inside a span nests under it, sync and async")
    func parentSpan() async throws {
        let tracer = InMemoryTracer()
        let container = app()
        container.addObserver(TracingObserver(tracer: tracer, threshold: threshold))
        try tracer.withSpan("GET /sync") { _ in
            _ = try container.resolve(Repository.self)
        }
        try await tracer.withSpan("GET /async") { _ in
            _ = try await container.resolve(AppModel.self)
        }

        let spans = Spans(tracer)
        let request = try spans.named("GET /sync")
        let resolve = try spans.named("resolve Repository")
        #expect(resolve.isChild(of: request))
        #expect(try spans.named("Repository").isChild(of: resolve))
        #expect(request.encloses(resolve))
        let asyncRequest = try spans.named("GET /async")
        let asyncResolve = try spans.named("resolve AppModel")
        #expect(asyncResolve.isChild(of: asyncRequest))
        #expect(try spans.named("AppModel").isChild(of: asyncResolve))
        #expect(asyncRequest.traceID != request.traceID)
    }

    @Test("a resolve a factory makes through a container is a span of its own beside the outer one")
    func nestedTopLevelResolve() throws {
        let tracer = InMemoryTracer()
        let container = app()
        container.register(Settings.self) { _ in
            _ = try container.resolve(Repository.self)
            return Settings()
        }
        container.addObserver(TracingObserver(tracer: tracer, threshold: threshold))
        try tracer.withSpan("request") { _ in
            _ = try container.resolve(Settings.self)
        }
        let spans = Spans(tracer)
        let request = try spans.named("request")
        #expect(try spans.named("resolve Settings").isChild(of: request))
        #expect(try spans.named("resolve Repository").isChild(of: request))
        #expect(try spans.named("Repository").isChild(of: spans.named("resolve Repository")))
    }

    @Test("an observer added to a parent traces its children's resolves, present and future")
    func children() throws {
        let tracer = InMemoryTracer()
        let root = app()
        root.register(Session.self) { _ in
            sleep(milliseconds: slow)
            return Session()
        }
        .inObjectScope(.perContainer)
        let earlier = root.makeChild()
        root.addObserver(TracingObserver(tracer: tracer, threshold: threshold))
        let later = root.makeChild()
        let grandchild = later.makeChild()
        _ = try earlier.resolve(Session.self)
        _ = try grandchild.resolve(Repository.self)

        let spans = Spans(tracer)
        let session = try spans.named("resolve Session")
        #expect(session.attributes.get("arbor.container") == .string("child (depth 1)"))
        #expect(try spans.named("Session").attributes.get("arbor.keeper") == .string("child (depth 1)"))
        let repository = try spans.named("resolve Repository")
        #expect(repository.attributes.get("arbor.container") == .string("child (depth 2)"))
        #expect(try spans.named("Database").attributes.get("arbor.keeper") == .string("root"))
        #expect(try spans.named("Database").isChild(of: spans.named("Repository")))
    }

    @Test("removing the observer stops the spans, in the container and its children")
    func removing() throws {
        let tracer = InMemoryTracer()
        let root = app()
        let child = root.makeChild()
        let observer = TracingObserver(tracer: tracer, threshold: threshold)
        root.addObserver(observer)
        _ = try child.resolve(Repository.self)
        #expect(Spans(tracer).names == ["resolve Repository", "Repository", "Database"])
        tracer.clearAll()

        root.removeObserver(observer)
        _ = try root.resolve(Repository.self)
        _ = try child.resolve(Repository.self)
        #expect(tracer.finishedSpans.isEmpty)
        #expect(tracer.activeSpans.isEmpty)
        #expect(observer.resolvesUnderWay == 0)
    }

    @Test("without a tracer given, the one InstrumentationSystem.tracer gives as each resolve begins")
    func taskLocalTracer() async throws {
        let tracer = InMemoryTracer()
        let container = app()
        let observer = TracingObserver(threshold: threshold)
        container.addObserver(observer)
        // No tracer bound or bootstrapped: NoOpTracer, and nothing is recorded.
        _ = try await container.resolve(Analytics.self)
        #expect(observer.resolvesUnderWay == 0)
        try resolveSynchronously(Repository.self, from: container, with: tracer)
        try await withTracer(tracer) {
            _ = try await container.resolve(Analytics.self)
        }
        #expect(Spans(tracer).names == ["resolve Repository", "Repository", "Database", "resolve Analytics"])
    }

    @Test("resolves on several threads at once: each its own spans, none crossed")
    func threads() throws {
        let tracer = InMemoryTracer()
        let container = app()
        container.register(Database.self) { _ in Database() }  // transient: built by every resolve
        container.register(Repository.self) { r in Repository(database: try r.resolve(Database.self)) }
        let observer = TracingObserver(tracer: tracer, threshold: .zero)
        container.addObserver(observer)
        let threads = 4
        let rounds = 50
        let finished = runThreads(threads, timeout: Watchdog.patience) { _ in
            for _ in 0..<rounds {
                _ = try? container.resolve(AppModel.self)
            }
        }
        #expect(finished)
        try expectSeparateTraces(Spans(tracer), resolves: threads * rounds)
        #expect(observer.resolvesUnderWay == 0)
    }

    @Test("async resolves in many tasks at once: each its own spans, none crossed, each under its task's span")
    func tasks() async throws {
        let tracer = InMemoryTracer()
        let container = Container()
        container.register(Database.self) { _ async in
            await Task.yield()
            return Database()
        }
        container.register(Repository.self) { r async throws in
            await Task.yield()
            return Repository(database: try await r.resolve(Database.self))
        }
        container.register(Analytics.self) { _ in Analytics() }
        container.register(AppModel.self) { r async throws in
            AppModel(
                repository: try await r.resolve(Repository.self), analytics: try await r.resolve(Analytics.self))
        }
        let observer = TracingObserver(tracer: tracer, threshold: .zero)
        container.addObserver(observer)
        let tasks = 8
        let rounds = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    try await tracer.withSpan("task \(task)") { _ in
                        for _ in 0..<rounds {
                            _ = try await container.resolve(AppModel.self)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let spans = Spans(tracer)
        try expectSeparateTraces(
            Spans(all: spans.all.filter { !$0.operationName.hasPrefix("task ") }), resolves: tasks * rounds,
            underParents: true)
        for task in 0..<tasks {
            let parent = try spans.named("task \(task)")
            let resolves = spans.children(of: parent)
            #expect(resolves.count == rounds)
            #expect(resolves.allSatisfy { $0.operationName == "resolve AppModel" && $0.traceID == parent.traceID })
        }
        #expect(observer.resolvesUnderWay == 0)
    }
}

/// A synchronous resolve, with `tracer` bound as the task's tracer.
private func resolveSynchronously<Service>(
    _ type: Service.Type, from container: Container, with tracer: any Tracer
) throws {
    try withTracer(tracer) {
        _ = try container.resolve(type)
    }
}

extension Spans {
    init(all: [FinishedInMemorySpan]) {
        self.all = all
    }
}

/// Every resolve of AppModel made exactly its own four factory spans, nested AppModel → Repository → Database and
/// AppModel → Analytics, in its own trace (or, `underParents`, each resolve in its parent's trace).
private func expectSeparateTraces(_ spans: Spans, resolves: Int, underParents: Bool = false) throws {
    let roots = spans.all.filter { $0.operationName == "resolve AppModel" }
    #expect(roots.count == resolves)
    #expect(spans.all.count == resolves * 5)
    if !underParents {
        #expect(Set(roots.map(\.traceID)).count == resolves, "a trace per resolve")
    }
    for root in roots {
        let models = spans.children(of: root)
        #expect(models.map(\.operationName) == ["AppModel"])
        let model = try #require(models.first)
        #expect(Set(spans.children(of: model).map(\.operationName)) == ["Repository", "Analytics"])
        let repository = try #require(spans.children(of: model).first { $0.operationName == "Repository" })
        #expect(spans.children(of: repository).map(\.operationName) == ["Database"])
        #expect(spans.children(of: model).allSatisfy { $0.traceID == root.traceID && model.encloses($0) })
    }
}
#endif
