import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

#if canImport(Glibc)
import Glibc
#endif

// Memory: dropping a container frees it and everything it created; a long loop of resolves in every lifetime has
// flat memory — every instance is freed, and the container's bookkeeping (the list of children, cached look-ups,
// references to leak trackers) stays bounded, which is what Swinject #510 got wrong (its graph identifiers piled up,
// one per resolve); and LeakTracker finds nothing in the object graphs of the examples.
//
// The checks are deterministic (weak references, instance counts, bookkeeping sizes read through
// `@testable import`); on Linux, outside sanitizers, the resident set size is checked as well, with a generous bound.

@Suite struct MemoryTests {
    // MARK: Dropping a container

    @Test func droppingAContainerTreeFreesItAndEverythingItCreated() throws {
        let live = MELive()
        let (containers, instances) = try buildUseAndDropATree(live: live)
        #expect(containers.allSatisfy { $0.object == nil }, "a container outlived the last reference to it")
        let survivors = instances.filter { $0.object != nil }.map { "\(type(of: $0.object!))" }
        #expect(survivors.isEmpty, "still alive: \(survivors)")
        #expect(live.count == 0)
    }

    @Test func aThreadThatResolvedKeepsNoContainerAlive() throws {
        // Each thread keeps its last resolution for reuse; an idle one must not keep the containers it used.
        let live = MELive()
        let release = DispatchSemaphore(value: 0)
        let resolved = DispatchSemaphore(value: 0)
        let reference: WeakRef<Container> = {
            let container = Container()
            container.register(MENode.self) { _ in MENode(live) }.inObjectScope(.permanent)
            // The thread's closure holds only the box, which it empties: nothing but its idle resolution is left.
            let handOver = Box(container)
            let thread = Thread {
                func work() {
                    let container = handOver.value
                    handOver.value = nil
                    _ = try? container?.resolve(MENode.self)
                }
                work()
                resolved.signal()
                release.wait()  // the thread lives on, with its idle resolution
            }
            thread.start()
            resolved.wait()
            return WeakRef(container)
        }()
        #expect(reference.object == nil, "a finished thread's idle resolution keeps the container alive")
        #expect(live.count == 0)
        release.signal()
    }

    @Test func aFailedResolveLeavesNothingThatKeepsTheContainerAlive() throws {
        // A permanent built inside a permanent whose factory then throws: after the failed resolve, dropping the
        // container must free it and the instance.
        let live = MELive()
        let (container, instance): (WeakRef<Container>, WeakRef<MENode>) = {
            let container = Container()
            let built = Box<WeakRef<MENode>>()
            container.register(MENode.self) { _ in
                let node = MENode(live)
                built.value = WeakRef(node)
                return node
            }.inObjectScope(.permanent)
            container.register(MEHolder.self) { r in
                _ = try r.resolve(MENode.self)
                throw TestFailure("holder")
            }.inObjectScope(.permanent)
            _ = try? container.resolve(MEHolder.self)
            return (WeakRef(container), built.value!)
        }()
        #expect(instance.object == nil, "the permanent built by the failed resolve is still alive")
        #expect(container.object == nil, "the container outlived the test's references after a failed resolve")
    }

    // MARK: A long loop

    /// What one round of the long loop left: the instances alive (counted by the services, and by the tracker), and
    /// how much the resident set grew, where the system tells.
    private struct LoopRound: Sendable {
        let live: Int
        let tracked: Int
        let residentGrowth: Int?
    }

    @Test func aLongLoopOfResolvesInEveryLifetimeHasFlatMemory() async throws {
        let rounds = 5
        let resolvesPerRound = TestEnvironment.isLongSoak ? 200_000 : 20_000
        let live = MELive()
        let root = Container()
        registerEveryLifetime(in: root, live: live)
        let child = root.makeChild()
        let tracker = LeakTracker(root)

        // The rounds run on a thread of their own: for seconds (minutes under a sanitizer), they would hold one of
        // the few threads Swift runs tasks on, which the tests running alongside need. The checks are here.
        let done = await onAThreadOfItsOwn {
            Result {
                try (0..<rounds).map { _ in
                    let residentBefore = residentBytes()
                    var resolves = 0
                    while resolves < resolvesPerRound {
                        resolves += try resolveEverything(from: root, child: child, live: live)
                    }
                    let growth = residentBefore.flatMap { before in residentBytes().map { $0 - before } }
                    return LoopRound(live: live.count, tracked: tracker.liveInstanceCount, residentGrowth: growth)
                }
            }
        }
        let residentGrowth = try done.get().compactMap(\.residentGrowth)
        // Nothing but the permanent instances outlives a round.
        let permanentCount = try done.get()[0].live
        for (round, left) in try done.get().enumerated() {
            #expect(left.live == permanentCount, "round \(round): \(left.live - permanentCount) instances leaked")
            #expect(left.tracked == permanentCount)
        }
        #expect(tracker.check().isClean)

        // Bookkeeping: the root's list of children stays bounded.
        let children = root.linkedChildCount
        #expect(children < 64, "the root remembers \(children) children, most of them gone")

        // The resident set: at least one round must not grow by more than a generous 8 MB (a leak of one small
        // allocation per resolve would be several MB every round). Skipped under sanitizers, which keep freed
        // memory in quarantine.
        print(
            "MemoryTests: resident-set growth per round of \(resolvesPerRound) resolves: "
                + "\(residentGrowth.map { $0 >> 10 }) KB\(TestEnvironment.runsUnderSanitizer ? " (sanitizer: not checked)" : "")"
        )
        if !residentGrowth.isEmpty, !TestEnvironment.runsUnderSanitizer {
            let smallest = residentGrowth.min()!
            #expect(
                smallest < 8 << 20,
                "resident memory grew in every round of \(resolvesPerRound) resolves: \(residentGrowth.map { $0 >> 10 }) KB"
            )
        }
        withExtendedLifetime(tracker) {}
    }

    @Test func makingAndDroppingChildrenAndTrackersKeepsTheBookkeepingBounded() throws {
        let live = MELive()
        let root = Container()
        registerEveryLifetime(in: root, live: live)
        for index in 0..<5_000 {
            let child = root.makeChild()
            let grandchild = child.makeChild()
            child.register(MENode.self, name: "child") { _ in MENode(live) }
            _ = try grandchild.resolve(MERoot.self)
            _ = try grandchild.resolve(MENode.self, name: "child")
            if index % 10 == 0 {
                let tracker = LeakTracker(grandchild)
                _ = try grandchild.resolve(MERoot.self)
                #expect(tracker.check().isClean)
            }
        }
        for _ in 0..<1_000 {
            let tracker = LeakTracker(root)
            _ = try root.resolve(MERoot.self)
            #expect(tracker.check().isClean)
        }
        let children = root.linkedChildCount
        let trackers = root.registry.withLock { $0.diagnostics?.observers.count ?? 0 }
        #expect(children < 16, "the root remembers \(children) children that are gone")
        #expect(trackers < 16, "the root keeps \(trackers) references to leak trackers that are gone")
        #expect(live.count == 1, "only the permanent instance should be alive, found \(live.count)")
    }

    // MARK: The examples

    @Test func leakTrackerFindsNothingInTheExamplesObjectGraphs() throws {
        // The object graphs of Examples/ (news-app, test-overrides, weak-cache, circular-wiring), wired the same way.
        try ExampleGraphs.newsApp()
        try ExampleGraphs.testOverrides()
        try ExampleGraphs.weakCache()
        try ExampleGraphs.circularWiring()
    }
}

// MARK: - Building and dropping a tree

/// Builds a three-level tree with every lifetime, resolves from every level and from other threads, drops it all,
/// and returns weak references to every container and every instance that was created.
private func buildUseAndDropATree(live: MELive) throws -> ([WeakRef<Container>], [WeakRef<AnyObject>]) {
    let created = MECreated()
    var containers: [WeakRef<Container>] = []
    try {
        let root = Container()
        let child = root.makeChild()
        let grandchild = child.makeChild()
        containers = [root, child, grandchild].map(WeakRef.init)
        let session = ObjectScope(name: "session", retention: .strong)
        let tracker = LeakTracker(root)

        root.register(MENode.self) { _ in created.add(MENode(live)) }.inObjectScope(.permanent)
        root.register(MENode.self, name: "weak") { _ in created.add(MENode(live)) }.inObjectScope(.weak)
        root.register(MENode.self, name: "graph") { _ in created.add(MENode(live)) }.inObjectScope(.graph)
        root.register(MENode.self, name: "session") { _ in created.add(MENode(live)) }.inObjectScope(session)
        root.register(MENode.self, name: "transient") { _ in created.add(MENode(live)) }
            .inObjectScope(.transient)
            .implements(AnyObject.self, name: "forward")
        root.register(MEArgument.self) { (_, value: Int) in created.add(MEArgument(live, value: value)) }
            .inObjectScope(.permanent)
        root.register(MERoot.self) { r in
            created.add(
                MERoot(
                    live, permanent: try r.resolve(), weak: try r.resolve(name: "weak"),
                    graph: try r.resolve(name: "graph"), transient: try r.resolve(name: "transient"),
                    session: try r.resolve(name: "session"), argument: try r.resolve(MEArgument.self, arguments: 1),
                    lazy: try r.resolve(), provider: try r.resolve(), resolver: r))
        }
        .initCompleted { r, root in
            root.back = try r.resolve(MENode.self, name: "graph")
            _ = try root.lazy.instance
            _ = try root.provider.instance
        }
        child.register(MENode.self) { r in
            // A permanent keeps only what lives as long: a graph instance here would be a captive dependency, which
            // the tracker rightly reports.
            created.add(MENode(live, next: try r.resolve(MENode.self, name: "session")))
        }.inObjectScope(.permanent)
        grandchild.register(MENode.self, name: "weak") { _ in created.add(MENode(live)) }.inObjectScope(.weak)

        var kept: [AnyObject] = []
        for container in [root, child, grandchild] {
            kept.append(try container.resolve(MERoot.self))
            kept.append(try container.resolve(AnyObject.self, name: "forward"))
            kept.append(try container.resolve(Lazy<MENode>.self, name: "graph"))
        }
        // The threads' closures hold only the box, emptied before the check.
        let handOver = Box([root, child, grandchild])
        let finished = runThreads(4) { index in
            func work() {
                let container = handOver.value?[index % 3]
                _ = try? container?.resolve(MERoot.self)
            }
            work()
        }
        handOver.value = nil
        #expect(finished)
        #expect(tracker.check().isClean == false, "the test still holds what it resolved")
        kept.removeAll()
        #expect(tracker.check().isClean, "\(tracker.check())")
    }()
    return (containers, created.all)
}

// MARK: - The loop

private func registerEveryLifetime(in container: Container, live: MELive) {
    container.register(MENode.self) { _ in MENode(live) }.inObjectScope(.permanent)
    container.register(MENode.self, name: "weak") { _ in MENode(live) }.inObjectScope(.weak)
    container.register(MENode.self, name: "graph") { _ in MENode(live) }.inObjectScope(.graph)
    container.register(MENode.self, name: "transient") { _ in MENode(live) }.inObjectScope(.transient)
    container.register(MENode.self, name: "hooked") { r in MENode(live, next: try r.resolve(MENode.self, name: "graph"))
    }
    .inObjectScope(.graph)
    .initCompleted { r, node in node.back = try r.resolve(MENode.self, name: "graph") }
    container.register(MEArgument.self) { (_, value: Int) in MEArgument(live, value: value) }.inObjectScope(.transient)
    container.register(MEArgument.self, name: "permanent") { (_, value: Int) in MEArgument(live, value: value) }
        .inObjectScope(.permanent)
    container.register(MERoot.self) { r in
        MERoot(
            live, permanent: try r.resolve(), weak: try r.resolve(name: "weak"), graph: try r.resolve(name: "hooked"),
            transient: try r.resolve(name: "transient"), session: try r.resolve(name: "transient"),
            argument: try r.resolve(MEArgument.self, arguments: 2), lazy: try r.resolve(), provider: try r.resolve(),
            resolver: r)
    }.inObjectScope(.transient)
}

/// One of each kind of resolve; returns how many top-level resolves it made.
private func resolveEverything(from root: Container, child persistent: Container, live: MELive) throws -> Int {
    let weak = try root.resolve(MENode.self, name: "weak")  // kept while this round's resolves share it
    _ = try root.resolve(MENode.self)
    _ = try root.resolve(MENode.self, name: "graph")
    _ = try root.resolve(MENode.self, name: "transient")
    _ = try root.resolve(MENode.self, name: "hooked")
    _ = try root.resolve(MEArgument.self, arguments: 3)
    _ = try root.resolve(MEArgument.self, name: "permanent", arguments: 4)
    let top = try root.resolve(MERoot.self)
    _ = try top.lazy.instance
    _ = try top.provider.instance
    _ = try top.resolver.resolve(MENode.self, name: "graph")
    _ = try root.resolve(MENode?.self, name: "missing")
    let child = root.makeChild()
    child.register(MENode.self, name: "graph") { _ in MENode(live) }
    _ = try child.resolve(MERoot.self)
    _ = try persistent.resolve(MERoot.self)
    _ = try persistent.resolve(MENode.self, name: "hooked")
    withExtendedLifetime(weak) {}
    return 15
}

// MARK: - The examples' object graphs

/// The wiring of each example in Examples/, checked with a LeakTracker.
private enum ExampleGraphs {
    final class Client: @unchecked Sendable {}
    final class Store: @unchecked Sendable {
        let client: Client
        init(client: Client) { self.client = client }
    }
    final class Presenter: @unchecked Sendable {
        let client: Client
        weak var view: View?
        init(client: Client) { self.client = client }
    }
    final class View: @unchecked Sendable {
        let presenter: Presenter
        init(presenter: Presenter) { self.presenter = presenter }
    }
    final class Settings: @unchecked Sendable {}
    final class Model: @unchecked Sendable {
        let client: Client
        let settings: Settings
        init(client: Client, settings: Settings) {
            self.client = client
            self.settings = settings
        }
    }
    final class ImageCache: @unchecked Sendable {}
    final class PhotoScreen: @unchecked Sendable {
        let title: String
        let cache: ImageCache
        init(title: String, cache: ImageCache) {
            self.title = title
            self.cache = cache
        }
    }
    final class Interactor: @unchecked Sendable {
        weak var output: Presenter?
    }
    final class TriangleView: @unchecked Sendable {
        let presenter: TrianglePresenter
        init(presenter: TrianglePresenter) { self.presenter = presenter }
    }
    final class TrianglePresenter: @unchecked Sendable {
        let interactor: TriangleInteractor
        weak var view: TriangleView?
        init(interactor: TriangleInteractor) { self.interactor = interactor }
    }
    final class TriangleInteractor: @unchecked Sendable {
        weak var output: TrianglePresenter?
    }

    static func expectClean(_ tracker: LeakTracker, _ name: String) {
        let report = tracker.check()
        #expect(report.isClean, "\(name): \(report)")
        #expect(report.trackedCount > 0, "\(name): the tracker saw nothing")
    }

    static func newsApp() throws {
        let app = Container()
        app.register(Client.self) { _ in Client() }.inObjectScope(.permanent)
        app.register(Store.self) { r in Store(client: try r.resolve()) }.inObjectScope(.permanent)
        app.register(Presenter.self) { r in Presenter(client: try r.resolve()) }
            .initCompleted { r, presenter in presenter.view = try r.resolve(View.self) }
        app.register(View.self) { r in View(presenter: try r.resolve()) }
        let tracker = LeakTracker(app)
        try {
            let view = try app.resolve(View.self)
            #expect(view.presenter.view === view)
            let test = app.makeChild()
            test.register(Client.self) { _ in Client() }
            let testView = try test.resolve(View.self)
            #expect(testView.presenter.client !== view.presenter.client)
            _ = try test.resolve(Store.self)
        }()
        expectClean(tracker, "news-app")
    }

    static func testOverrides() throws {
        let app = Container()
        app.register(Client.self) { _ in Client() }.inObjectScope(.permanent)
        app.register(Settings.self) { _ in Settings() }.inObjectScope(.permanent)
        app.register(Store.self) { r in Store(client: try r.resolve()) }.inObjectScope(.permanent)
        app.register(Model.self) { r in Model(client: try r.resolve(), settings: try r.resolve()) }
        let tracker = LeakTracker(app)
        try {
            let test = app.makeChild()
            test.register(Client.self) { _ in Client() }
            let model = try test.resolve(Model.self)
            #expect(model.client !== (try app.resolve(Client.self)))
            _ = try test.resolve(Store.self)
            _ = try app.resolve(Model.self)
        }()
        expectClean(tracker, "test-overrides")
    }

    static func weakCache() throws {
        let container = Container()
        container.register(ImageCache.self) { _ in ImageCache() }.inObjectScope(.weak)
        container.register(PhotoScreen.self) { (r, title: String) in
            PhotoScreen(title: title, cache: try r.resolve())
        }.inObjectScope(.transient)
        let tracker = LeakTracker(container)
        try {
            var gallery: PhotoScreen? = try container.resolve(PhotoScreen.self, arguments: "Gallery")
            var detail: PhotoScreen? = try container.resolve(PhotoScreen.self, arguments: "Detail")
            #expect(gallery?.cache === detail?.cache)
            gallery = nil
            detail = nil
            _ = try container.resolve(PhotoScreen.self, arguments: "Album")
        }()
        expectClean(tracker, "weak-cache")
    }

    static func circularWiring() throws {
        let container = Container()
        container.register(TriangleView.self) { r in TriangleView(presenter: try r.resolve()) }
        container.register(TrianglePresenter.self) { r in TrianglePresenter(interactor: try r.resolve()) }
            .initCompleted { r, presenter in presenter.view = try r.resolve(TriangleView.self) }
        container.register(TriangleInteractor.self) { _ in TriangleInteractor() }
            .initCompleted { r, interactor in interactor.output = try r.resolve(TrianglePresenter.self) }
        let tracker = LeakTracker(container)
        try {
            let view = try container.resolve(TriangleView.self)
            #expect(view.presenter.view === view && view.presenter.interactor.output === view.presenter)
        }()
        expectClean(tracker, "circular-wiring")
        #expect(tracker.check().trackedCount == 3)
    }
}

// MARK: - Measuring

/// The resident set size, from /proc/self/statm; `nil` where there is none.
func residentBytes() -> Int? {
    #if os(Linux)
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return nil
    #endif
}

// MARK: - Types

/// Counts the instances alive.
private final class MELive: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add(_ amount: Int) { lock.withLock { value += amount } }
    var count: Int { lock.withLock { value } }
}

/// Remembers, weakly, every instance created.
private final class MECreated: @unchecked Sendable {
    private let lock = NSLock()
    private var references: [WeakRef<AnyObject>] = []
    func add<Object: AnyObject>(_ object: Object) -> Object {
        lock.withLock { references.append(WeakRef(object as AnyObject)) }
        return object
    }
    var all: [WeakRef<AnyObject>] { lock.withLock { references } }
}

private class MEObject: @unchecked Sendable {
    let live: MELive
    init(_ live: MELive) {
        self.live = live
        live.add(1)
    }
    deinit { live.add(-1) }
}

private final class MENode: MEObject, @unchecked Sendable {
    let next: MENode?
    weak var back: MENode?
    init(_ live: MELive, next: MENode? = nil) {
        self.next = next
        super.init(live)
    }
}

private final class MEHolder: MEObject, @unchecked Sendable {}

private final class MEArgument: MEObject, @unchecked Sendable {
    let value: Int
    init(_ live: MELive, value: Int) {
        self.value = value
        super.init(live)
    }
}

private final class MERoot: MEObject, @unchecked Sendable {
    let permanent: MENode
    let weak: MENode
    let graph: MENode
    let transient: MENode
    let session: MENode
    let argument: MEArgument
    let lazy: Lazy<MENode>
    let provider: Provider<MENode>
    let resolver: any Resolver
    weak var back: MENode?
    init(
        _ live: MELive, permanent: MENode, weak: MENode, graph: MENode, transient: MENode, session: MENode,
        argument: MEArgument, lazy: Lazy<MENode>, provider: Provider<MENode>, resolver: any Resolver
    ) {
        self.permanent = permanent
        self.weak = weak
        self.graph = graph
        self.transient = transient
        self.session = session
        self.argument = argument
        self.lazy = lazy
        self.provider = provider
        self.resolver = resolver
        super.init(live)
    }
}
