import Arbor
import ArborTestSupport
import Foundation
import Testing

// Soak (API.md §7): eight threads run a bounded number of random operations on one container tree — resolves in
// every lifetime (also with arguments, through Lazy and Provider, and across a cycle of permanent services entered
// from both ends), register and unregister, resetObjectScope, making and dropping child containers, leak trackers —
// while the test checks what must hold under any interleaving:
// - every resolve returns or throws only the errors its operation allows;
// - within one resolve, graph instances are shared and transient ones are not;
// - no thread sees a permanent instance before its initCompleted hook ran (plain `var`s: ThreadSanitizer checks the
//   container orders the hook's writes before every other thread's reads);
// - a permanent factory runs at most once per reset of its container;
// - a leak tracker on a tree no other thread touches finds nothing;
// - at the end, dropping the containers frees every container and every instance.
// A deadlock fails the test by timeout and never hangs the run. CI runs this under ThreadSanitizer and
// AddressSanitizer. ARBOR_SEED replays the same operation sequences; ARBOR_SOAK=long runs 20 times as many.

@Suite struct SoakTests {
    /// The test waits for the threads suspended (`onAThreadOfItsOwn`): it holds none of Swift's threads for tasks
    /// while they run, which the suites alongside need.
    @Test func eightThreadsOfRandomOperations() async throws {
        let seed = TestEnvironment.baseSeed
        let operationsPerThread = TestEnvironment.isLongSoak ? 100_000 : 5_000
        print("SoakTests: 8 threads × \(operationsPerThread) operations, ARBOR_SEED=\(TestEnvironment.hex(seed))")
        let started = Date()

        var world: SoakWorld? = SoakWorld()
        let live = world!.live
        let problems = ProblemLog()
        let counts = SoakCounts()
        let finished = await onAThreadOfItsOwn { [world] in
            runThreads(8, timeout: TestEnvironment.isLongSoak ? 1_800 : 300) { index in
                var rng = SplitMix64(seed: SplitMix64.derive(seed, UInt64(index)))
                for _ in 0..<operationsPerThread {
                    world!.randomOperation(&rng, thread: index, problems: problems, counts: counts)
                }
            }
        }
        try #require(
            finished, "the threads did not finish in time: a deadlock (ARBOR_SEED=\(TestEnvironment.hex(seed)))")
        #expect(problems.isEmpty, "ARBOR_SEED=\(TestEnvironment.hex(seed)): \(problems.summary)")

        // One permanent instance per registration, and one more after each reset of the container that holds it.
        // (Factories may run more often: a resolve that backs off from a cross-thread deadlock drops what it built.)
        let resets = counts.value("reset root .permanent")
        for service in ["SoakPermanent", "SoakHooked", "SoakConfig", "SoakCycleA", "SoakCycleB"] {
            let seen = world!.seen.count(service)
            #expect(seen >= 1 && seen <= resets + 1, "\(service): \(seen) instances seen for \(resets) resets")
        }

        let containers = world!.tearDown()
        world = nil
        let survivors = containers.filter { $0.object != nil }.count
        #expect(survivors == 0, "\(survivors) of \(containers.count) containers outlived the test's references")
        #expect(live.value == 0, "\(live.value) instances outlived their containers")
        let seconds = Date().timeIntervalSince(started)
        print("SoakTests: \(counts.summary) in \(String(format: "%.1f", seconds)) s")
    }
}

extension SoakTests {
    @Test func checkingALeakTrackerWhileChildContainersAreFreedIsSafe() async throws {
        // One thread makes children with a permanent override, resolves it, and drops them; another checks a leak
        // tracker on their parent all the while. The tracker's records refer weakly to the children's storages:
        // checking one while its container is being freed must not touch the freed container.
        let live = SoakLive()
        let root = Container()
        let tracker = LeakTracker(root)
        let done = Flag()
        let checks = AtomicCounter()
        // Waited for suspended, as the soak's threads are.
        let finished = await onAThreadOfItsOwn {
            runThreads(2) { index in
                if index == 0 {
                    for _ in 0..<(TestEnvironment.runsUnderSanitizer ? 3_000 : 20_000) {
                        let child = root.makeChild()
                        child.register(SoakConfig.self) { _ in SoakConfig(live) }.inObjectScope(.permanent)
                        _ = try? child.resolve(SoakConfig.self)
                    }
                    done.isOn = true
                } else {
                    while !done.isOn {
                        _ = tracker.check()
                        checks.add()
                    }
                }
            }
        }
        try #require(finished, "the threads did not finish in time")
        #expect(checks.value > 0)
        #expect(live.value == 0)
    }
}

// MARK: - The world the threads share

/// Counts events by name, from any thread.
private final class SoakCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func add(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }
    func value(_ name: String) -> Int { lock.withLock { counts[name] ?? 0 } }

    var summary: String {
        lock.withLock {
            let resolves = counts.filter { $0.key.hasPrefix("op ") }.values.reduce(0, +)
            return "\(resolves) operations, \(counts["build SoakRoot"] ?? 0) roots built, "
                + "\(counts["reset root .permanent"] ?? 0) resets of the root's permanents, "
                + "\(counts["op make child"] ?? 0) children made"
        }
    }
}

/// The number of soak instances alive, and serial numbers for them.
private final class SoakLive: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var serials = 0
    func add(_ amount: Int) -> Int {
        lock.withLock {
            count += amount
            if amount > 0 { serials += 1 }
            return serials
        }
    }
    var value: Int { lock.withLock { count } }
}

private class SoakObject: @unchecked Sendable {
    let live: SoakLive
    let serial: Int
    init(_ live: SoakLive) {
        self.live = live
        serial = live.add(1)
    }
    deinit { _ = live.add(-1) }
}

/// The serials of the permanent instances the threads saw, by service.
private final class SoakSeen: @unchecked Sendable {
    private let lock = NSLock()
    private var serials: [String: Set<Int>] = [:]

    func saw(_ object: SoakObject?) {
        guard let object else { return }
        let name = String(describing: type(of: object))
        lock.withLock { _ = serials[name, default: []].insert(object.serial) }
    }

    func count(_ name: String) -> Int { lock.withLock { serials[name]?.count ?? 0 } }
}

private final class SoakConfig: SoakObject, @unchecked Sendable {}
private final class SoakTransient: SoakObject, @unchecked Sendable {}
private final class SoakGraph: SoakObject, @unchecked Sendable {}
private final class SoakWeak: SoakObject, @unchecked Sendable {}
private final class SoakVolatile: SoakObject, @unchecked Sendable {}

private final class SoakPermanent: SoakObject, @unchecked Sendable {
    let config: SoakConfig
    /// Built by the root's registration, not a child's override.
    let fromRoot: Bool
    init(_ live: SoakLive, config: SoakConfig, fromRoot: Bool) {
        self.config = config
        self.fromRoot = fromRoot
        super.init(live)
    }
}

/// Finished by a hook: `ready` must be true wherever another thread sees it.
private final class SoakHooked: SoakObject, @unchecked Sendable {
    var ready = false
    var permanent: SoakPermanent?
}

private final class SoakPart: SoakObject, @unchecked Sendable {
    let graph: SoakGraph
    let transient: SoakTransient
    let weak: SoakWeak
    init(_ live: SoakLive, graph: SoakGraph, transient: SoakTransient, weak: SoakWeak) {
        self.graph = graph
        self.transient = transient
        self.weak = weak
        super.init(live)
    }
}

private final class SoakRoot: SoakObject, @unchecked Sendable {
    let graph: SoakGraph
    let part: SoakPart
    let transient: SoakTransient
    let permanent: SoakPermanent
    let weak: SoakWeak
    let hooked: SoakHooked
    let argument: SoakArgument
    let lazy: Lazy<SoakGraph>
    var fromHook: SoakGraph?
    init(
        _ live: SoakLive, graph: SoakGraph, part: SoakPart, transient: SoakTransient, permanent: SoakPermanent,
        weak: SoakWeak, hooked: SoakHooked, argument: SoakArgument, lazy: Lazy<SoakGraph>
    ) {
        self.graph = graph
        self.part = part
        self.transient = transient
        self.permanent = permanent
        self.weak = weak
        self.hooked = hooked
        self.argument = argument
        self.lazy = lazy
        super.init(live)
    }
}

private final class SoakArgument: SoakObject, @unchecked Sendable {
    let value: Int
    init(_ live: SoakLive, value: Int) {
        self.value = value
        super.init(live)
    }
}

private final class SoakCycleA: SoakObject, @unchecked Sendable {
    let b: SoakCycleB
    init(_ live: SoakLive, b: SoakCycleB) {
        self.b = b
        super.init(live)
    }
}

private final class SoakCycleB: SoakObject, @unchecked Sendable {
    weak var a: SoakCycleA?
    var wired = false
}

/// Keeps the resolver its factory received, to use it after the resolution finished.
private final class SoakCapture: SoakObject, @unchecked Sendable {
    let resolver: any Resolver
    init(_ live: SoakLive, resolver: any Resolver) {
        self.resolver = resolver
        super.init(live)
    }
}

private final class SoakTagged: SoakObject, @unchecked Sendable {
    let tag: String
    init(_ live: SoakLive, tag: String) {
        self.tag = tag
        super.init(live)
    }
}

/// A thread's own corner of the tree, and what it expects to find there. Only that thread uses it.
private final class SoakPrivateTree: @unchecked Sendable {
    let child: Container
    let grandchild: Container
    var version = 0
    var expectedOverride = "root"
    var expectedNamed: String?
    init(child: Container, grandchild: Container) {
        self.child = child
        self.grandchild = grandchild
    }
}

private struct SoakFailure: Error {}

private final class SoakWorld: @unchecked Sendable {
    let live = SoakLive()
    let seen = SoakSeen()
    private let lock = NSLock()
    private var root: Container?
    private var children: [Container] = []
    private var made: [WeakRef<Container>] = []
    private var privateTrees: [Int: SoakPrivateTree] = [:]
    private var counts: SoakCounts?

    init() {
        let root = Container()
        self.root = root
        made.append(WeakRef(root))
    }

    private func register(in root: Container, counts: SoakCounts) {
        let live = self.live
        root.register(SoakConfig.self) { _ in
            counts.add("build SoakConfig")
            return SoakConfig(live)
        }.inObjectScope(.permanent)
        root.register(SoakPermanent.self) { r in
            counts.add("build SoakPermanent")
            return SoakPermanent(live, config: try r.resolve(), fromRoot: true)
        }.inObjectScope(.permanent)
        root.register(SoakHooked.self) { _ in
            counts.add("build SoakHooked")
            return SoakHooked(live)
        }
        .inObjectScope(.permanent)
        .initCompleted { r, hooked in
            hooked.permanent = try r.resolve(SoakPermanent.self)
            hooked.ready = true
        }
        root.register(SoakWeak.self) { _ in SoakWeak(live) }.inObjectScope(.weak)
        root.register(SoakGraph.self) { _ in SoakGraph(live) }.inObjectScope(.graph)
        root.register(SoakTransient.self) { _ in SoakTransient(live) }.inObjectScope(.transient)
        root.register(SoakPart.self) { r in
            SoakPart(live, graph: try r.resolve(), transient: try r.resolve(), weak: try r.resolve())
        }.inObjectScope(.transient)
        root.register(SoakArgument.self) { (_, value: Int) in SoakArgument(live, value: value) }.inObjectScope(.graph)
        root.register(SoakArgument.self, name: "flaky") { (_, value: Int) in
            if value % 3 == 0 { throw SoakFailure() }
            return SoakArgument(live, value: value)
        }.inObjectScope(.transient)
        root.register(SoakArgument.self, name: "permanent") { (_, value: Int) in
            if value % 2 == 1 { throw SoakFailure() }
            return SoakArgument(live, value: value)
        }.inObjectScope(.permanent)
        root.register(SoakRoot.self) { r in
            counts.add("build SoakRoot")
            return SoakRoot(
                live, graph: try r.resolve(), part: try r.resolve(), transient: try r.resolve(),
                permanent: try r.resolve(), weak: try r.resolve(), hooked: try r.resolve(),
                argument: try r.resolve(SoakArgument.self, arguments: 7), lazy: try r.resolve())
        }
        .inObjectScope(.transient)
        .initCompleted { r, root in root.fromHook = try r.resolve(SoakGraph.self) }
        root.register(SoakCycleA.self) { r in
            counts.add("build SoakCycleA")
            return SoakCycleA(live, b: try r.resolve())
        }.inObjectScope(.permanent)
        root.register(SoakCycleB.self) { _ in
            counts.add("build SoakCycleB")
            return SoakCycleB(live)
        }
        .inObjectScope(.permanent)
        .initCompleted { r, b in
            b.a = try r.resolve(SoakCycleA.self)
            b.wired = true
        }
        root.register(SoakCapture.self) { r in SoakCapture(live, resolver: r) }.inObjectScope(.transient)
        root.register(SoakTagged.self) { _ in SoakTagged(live, tag: "root") }.inObjectScope(.transient)
    }

    private func setUpIfNeeded(_ counts: SoakCounts) -> Container {
        lock.withLock {
            if self.counts == nil {
                self.counts = counts
                register(in: root!, counts: counts)
            }
            return root!
        }
    }

    /// The root or one of the live children.
    private func someContainer(_ rng: inout SplitMix64) -> Container {
        lock.withLock {
            if children.isEmpty || rng.chance(0.3) { return root! }
            return children[rng.int(in: 0..<children.count)]
        }
    }

    private func someChild(_ rng: inout SplitMix64) -> Container? {
        lock.withLock { children.isEmpty ? nil : children[rng.int(in: 0..<children.count)] }
    }

    func tearDown() -> [WeakRef<Container>] {
        lock.withLock {
            root = nil
            children = []
            privateTrees = [:]
            return made
        }
    }

    // MARK: Operations

    func randomOperation(_ rng: inout SplitMix64, thread: Int, problems: ProblemLog, counts: SoakCounts) {
        let root = setUpIfNeeded(counts)
        let roll = rng.int(in: 0..<100)
        switch roll {
        case 0..<6:
            counts.add("op private overrides")
            privateOverrides(thread: thread, root: root, rng: &rng, problems: problems)
        case 6..<30:
            counts.add("op resolve root")
            resolveRoot(from: someContainer(&rng), problems: problems)
        case 30..<40:
            counts.add("op resolve one")
            resolveOne(from: someContainer(&rng), rng: &rng, problems: problems)
        case 40..<45:
            counts.add("op cycle")
            resolveCycle(from: someContainer(&rng), startAtA: rng.chance(0.5), problems: problems)
        case 45..<50:
            counts.add("op arguments")
            resolveWithArguments(from: someContainer(&rng), value: rng.int(in: 0...8), problems: problems)
        case 50..<54:
            counts.add("op provider")
            useProvider(from: someContainer(&rng), problems: problems)
        case 54..<62:
            counts.add("op override")
            guard let child = someChild(&rng) else { break }
            override(in: child, rng: &rng)
        case 62..<66:
            counts.add("op unregister")
            guard let child = someChild(&rng) else { break }
            switch rng.int(in: 0..<3) {
            case 0: child.unregister(SoakTransient.self)
            case 1: child.unregister(SoakPermanent.self)
            default: child.unregister(SoakWeak.self)
            }
        case 66..<70:
            counts.add("op volatile")
            volatile(root: root, register: rng.chance(0.5), problems: problems)
        case 70..<76:
            counts.add("op reset")
            let container = rng.chance(0.5) ? root : (someChild(&rng) ?? root)
            let scope: ObjectScope = rng.chance(0.6) ? .permanent : .weak
            // Counted before the reset: a build that starts after this count may see the reset's effect.
            if container === root && scope == .permanent { counts.add("reset root .permanent") }
            container.resetObjectScope(scope)
        case 76..<84:
            counts.add("op make child")
            makeChild(&rng)
        case 84..<88:
            counts.add("op drop child")
            lock.withLock {
                if !children.isEmpty { children.remove(at: rng.int(in: 0..<children.count)) }
            }
        case 88..<89:
            counts.add("op close child")
            let closing: Container? = lock.withLock {
                children.isEmpty ? nil : children.remove(at: rng.int(in: 0..<children.count))
            }
            closing?.close()
        case 89..<93:
            counts.add("op private tracker")
            privateTracker(problems: problems)
        case 93..<96:
            counts.add("op shared tracker")
            sharedTracker(on: someContainer(&rng), problems: problems)
        default:
            counts.add("op captured resolver")
            capturedResolver(from: someContainer(&rng), problems: problems)
        }
    }

    /// Records an error, unless it is a closed child's `.containerClosed`: another thread may close any child.
    private func report(_ error: any Error, from container: Container, _ what: String, _ problems: ProblemLog) {
        if let error = error as? ResolutionError, case .containerClosed = error.reason, container !== root {
            return
        }
        problems.record("\(what) threw \(error)")
    }

    /// Each thread owns a child of the root, and a grandchild under it, which no other thread touches. It
    /// registers and removes overrides there, and named services in the root (its own names), and checks that the
    /// grandchild always finds the registration it must — while the other threads change the root's registrations,
    /// which makes every descendant forget the look-ups it cached.
    private func privateOverrides(thread: Int, root: Container, rng: inout SplitMix64, problems: ProblemLog) {
        let tree = privateTree(thread, root: root)
        let live = self.live
        tree.version += 1
        let tag = "t\(thread).\(tree.version)"
        let name = "t\(thread)"
        switch rng.int(in: 0..<4) {
        case 0:
            tree.child.register(SoakTagged.self) { _ in SoakTagged(live, tag: tag) }
            tree.expectedOverride = tag
        case 1:
            tree.child.unregister(SoakTagged.self)
            tree.expectedOverride = "root"
        case 2:
            root.register(SoakTagged.self, name: name) { _ in SoakTagged(live, tag: tag) }
            tree.expectedNamed = tag
        default:
            root.unregister(SoakTagged.self, name: name)
            tree.expectedNamed = nil
        }
        do {
            let found = try tree.grandchild.resolve(SoakTagged.self)
            problems.check(
                found.tag == tree.expectedOverride,
                "thread \(thread): found \(found.tag), expected \(tree.expectedOverride): a stale cached look-up")
            let named = try tree.grandchild.resolve(SoakTagged?.self, name: name)
            problems.check(
                named?.tag == tree.expectedNamed,
                "thread \(thread): found \(named?.tag ?? "nil") under \(name), expected \(tree.expectedNamed ?? "nil")")
        } catch {
            problems.record("thread \(thread): resolving in its private tree threw \(error)")
        }
    }

    private func privateTree(_ thread: Int, root: Container) -> SoakPrivateTree {
        lock.withLock {
            if let tree = privateTrees[thread] { return tree }
            let child = Container(parent: root, defaultScope: .transient)
            let tree = SoakPrivateTree(child: child, grandchild: child.makeChild())
            privateTrees[thread] = tree
            made.append(WeakRef(tree.child))
            made.append(WeakRef(tree.grandchild))
            return tree
        }
    }

    private func resolveRoot(from container: Container, problems: ProblemLog) {
        do {
            let root = try container.resolve(SoakRoot.self)
            problems.check(root.graph === root.part.graph, "graph instance not shared within one resolve")
            problems.check(root.fromHook === root.graph, "a hook did not share the resolve's graph")
            problems.check(root.transient !== root.part.transient, "transient instance shared within one resolve")
            problems.check(root.hooked.ready, "a permanent instance was visible before its hook finished")
            problems.check(root.hooked.permanent != nil, "a permanent instance's hook result is missing")
            problems.check(root.argument.value == 7, "graph instance with arguments has the wrong value")
            seePermanents(root.permanent, root.hooked)
            let lazy = try root.lazy.instance
            problems.check(try root.lazy.instance === lazy, "Lazy resolved twice")
        } catch {
            report(error, from: container, "resolving SoakRoot", problems)
        }
    }

    private func seePermanents(_ permanent: SoakPermanent?, _ hooked: SoakHooked?) {
        for candidate in [permanent, hooked?.permanent] {
            guard let candidate, candidate.fromRoot else { continue }
            seen.saw(candidate)
            seen.saw(candidate.config)
        }
        seen.saw(hooked)
    }

    private func resolveOne(from container: Container, rng: inout SplitMix64, problems: ProblemLog) {
        do {
            switch rng.int(in: 0..<5) {
            case 0:
                let hooked = try container.resolve(SoakHooked.self)
                problems.check(hooked.ready, "a permanent instance was visible before its hook finished")
                seePermanents(nil, hooked)
            case 1:
                seePermanents(try container.resolve(SoakPermanent.self), nil)
            case 2:
                _ = try container.resolve(SoakWeak.self)
            case 3:
                let first = try container.resolve(SoakGraph.self)
                problems.check(
                    try container.resolve(SoakGraph.self) !== first, "graph instance reused by a new resolve")
            default:
                let optional = try container.resolve(SoakVolatile?.self)
                _ = optional
            }
        } catch {
            report(error, from: container, "resolving one service", problems)
        }
    }

    private func resolveCycle(from container: Container, startAtA: Bool, problems: ProblemLog) {
        do {
            if startAtA {
                let a = try container.resolve(SoakCycleA.self)
                problems.check(a.b.wired, "CycleB visible before its hook finished")
                seen.saw(a)
                seen.saw(a.b)
            } else {
                let b = try container.resolve(SoakCycleB.self)
                // `b.a` is weak: a reset of the root may already have freed that A.
                problems.check(b.wired, "CycleB visible before its hook finished")
                seen.saw(b)
                seen.saw(b.a)
            }
        } catch {
            report(error, from: container, "resolving the cycle", problems)
        }
    }

    private func resolveWithArguments(from container: Container, value: Int, problems: ProblemLog) {
        do {
            let flaky = try container.resolve(SoakArgument.self, name: "flaky", arguments: value)
            problems.check(value % 3 != 0 && flaky.value == value, "flaky factory returned instead of throwing")
        } catch let error as ResolutionError {
            guard case .factoryFailed(let underlying) = error.reason, underlying is SoakFailure, value % 3 == 0,
                error.path == [ServiceKey(SoakArgument.self, name: "flaky", arguments: Int.self)]
            else {
                report(error, from: container, "flaky resolve", problems)
                return
            }
        } catch {
            problems.record("flaky resolve threw \(error)")
        }
        do {
            let permanent = try container.resolve(SoakArgument.self, name: "permanent", arguments: value)
            problems.check(permanent.value % 2 == 0, "a permanent with arguments kept a failed build")
        } catch let error as ResolutionError {
            guard case .factoryFailed(let underlying) = error.reason, underlying is SoakFailure, value % 2 == 1 else {
                report(error, from: container, "permanent resolve with arguments", problems)
                return
            }
        } catch {
            problems.record("permanent resolve with arguments threw \(error)")
        }
    }

    private func useProvider(from container: Container, problems: ProblemLog) {
        do {
            let provider = try container.resolve(Provider<SoakTransient>.self)
            problems.check(try provider.instance !== provider.instance, "a Provider of a transient returned one twice")
        } catch {
            report(error, from: container, "Provider", problems)
        }
    }

    private func override(in child: Container, rng: inout SplitMix64) {
        let live = self.live
        switch rng.int(in: 0..<3) {
        case 0:
            child.register(SoakTransient.self) { _ in SoakTransient(live) }.inObjectScope(.transient)
        case 1:
            child.register(SoakPermanent.self) { r in SoakPermanent(live, config: try r.resolve(), fromRoot: false) }
                .inObjectScope(.permanent)
        default:
            child.register(SoakWeak.self) { _ in SoakWeak(live) }.inObjectScope(.weak)
        }
    }

    private func volatile(root: Container, register: Bool, problems: ProblemLog) {
        let live = self.live
        if register {
            root.register(SoakVolatile.self) { _ in SoakVolatile(live) }
            return
        }
        root.unregister(SoakVolatile.self)
        do {
            _ = try root.resolve(SoakVolatile.self)
        } catch let error as ResolutionError {
            guard case .notRegistered = error.reason, error.key == ServiceKey(SoakVolatile.self) else {
                problems.record("resolving SoakVolatile threw \(error)")
                return
            }
        } catch {
            problems.record("resolving SoakVolatile threw \(error)")
        }
    }

    private func makeChild(_ rng: inout SplitMix64) {
        lock.withLock {
            guard children.count < 12 else { return }
            let parent = children.isEmpty || rng.chance(0.5) ? root! : children[rng.int(in: 0..<children.count)]
            // Children default to .transient, so an override registered while others resolve never has a scope it
            // was not meant to have, even before `inObjectScope` (see MisuseTests).
            let child = Container(parent: parent, defaultScope: .transient)
            children.append(child)
            made.append(WeakRef(child))
        }
    }

    /// A tree no other thread touches: its tracker must find nothing once the references are gone.
    private func privateTracker(problems: ProblemLog) {
        let live = self.live
        let container = Container()
        container.register(SoakConfig.self) { _ in SoakConfig(live) }.inObjectScope(.permanent)
        container.register(SoakPermanent.self) { r in SoakPermanent(live, config: try r.resolve(), fromRoot: false) }
            .inObjectScope(.permanent)
        container.register(SoakCycleB.self) { _ in SoakCycleB(live) }
            .initCompleted { r, b in b.a = try r.resolve(SoakCycleA.self) }
        container.register(SoakCycleA.self) { r in SoakCycleA(live, b: try r.resolve()) }
        let child = container.makeChild()
        let tracker = LeakTracker(container)
        do {
            let a = try child.resolve(SoakCycleA.self)
            problems.check(a.b.a === a, "graph cycle not wired")
            _ = try child.resolve(SoakPermanent.self)
        } catch {
            problems.record("private tree threw \(error)")
        }
        let report = tracker.check()
        problems.check(report.isClean, "a tracker on a private tree found leaks:\n\(report)")
    }

    private func sharedTracker(on container: Container, problems: ProblemLog) {
        let tracker = LeakTracker(container)
        do {
            _ = try container.resolve(SoakRoot.self)
        } catch {
            report(error, from: container, "resolving under a tracker", problems)
        }
        _ = tracker.check()
        _ = tracker.liveInstanceCount
    }

    private func capturedResolver(from container: Container, problems: ProblemLog) {
        do {
            let capture = try container.resolve(SoakCapture.self)
            let graph = try capture.resolver.resolve(SoakGraph.self)
            problems.check(
                try capture.resolver.resolve(SoakGraph.self) !== graph, "a finished resolution shared a graph")
        } catch {
            report(error, from: container, "captured resolver", problems)
        }
    }
}
