import Arbor
import ArborTestSupport
import Foundation
import Testing

// Fault injection (API.md §5, §10.2): factories and hooks that throw at random points of random graphs. After every
// failure the container must behave exactly as if the failed resolve never happened — no permanent or weak instance
// from it stays cached or alive, later resolves build what they would have built anyway — and the error must name
// the right path. The random suite checks each graph against the reference model and, independently of the model,
// against a fault-free twin of the same graph that never runs the resolves that failed. Directed tests pin the cases
// the random graphs found.

@Suite struct FaultInjectionTests {
    @Test func randomFaultsLeaveNoTrace() async {
        var shape = GraphShape()
        shape.faults = true
        await RandomGraphRunner(suite: "FaultInjectionTests", shape: shape, defaultGraphs: 500, twin: true).run()
    }

    // MARK: What a failed resolve must not keep

    @Test func aPermanentBuiltInsideAFailedPermanentBuildIsNotKept() throws {
        // Outer (permanent) resolves Inner (permanent, built fine), then throws. Nothing of that resolve may stay:
        // the next resolve of Inner builds a new one, and the first Inner is freed.
        let container = Container()
        let innerBuilds = Counter()
        let outerFails = Flag(true)
        container.register(FIInner.self) { _ in
            innerBuilds.increment()
            return FIInner()
        }.inObjectScope(.permanent)
        container.register(FIOuter.self) { r in
            let inner = try r.resolve(FIInner.self)
            if outerFails.isOn { throw TestFailure("outer") }
            return FIOuter(inner: inner)
        }.inObjectScope(.permanent)

        let error = resolutionError { try container.resolve(FIOuter.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.path == [ServiceKey(FIOuter.self)])
        #expect(innerBuilds.value == 1)

        let fromAnotherThread = onAnotherThread(timeout: 5) { (try? container.resolve(FIInner.self)) != nil }
        #expect(fromAnotherThread == true, "resolving Inner on another thread waited forever for the failed resolve")
        _ = try container.resolve(FIInner.self)
        #expect(innerBuilds.value == 2, "Inner must be built again: the failed resolve's Inner must not be kept")
    }

    @Test func aFailedPermanentBuildFreesThePermanentsItBuilt() throws {
        let container = Container()
        let outerFails = Flag(true)
        container.register(FIInner.self) { _ in FIInner() }.inObjectScope(.permanent)
        container.register(FIOuter.self) { r in
            let inner = try r.resolve(FIInner.self)
            FIInner.lastBuilt.value = WeakRef(inner)
            if outerFails.isOn { throw TestFailure("outer") }
            return FIOuter(inner: inner)
        }.inObjectScope(.permanent)

        #expect(throws: ResolutionError.self) { try container.resolve(FIOuter.self) }
        #expect(
            FIInner.lastBuilt.value?.object == nil,
            "the Inner built by the failed resolve is still alive: something keeps it")
        outerFails.isOn = false
        let outer = try container.resolve(FIOuter.self)
        #expect(try container.resolve(FIInner.self) === outer.inner)
    }

    @Test func aWeakValueServiceDoesNotStrandThePermanentItResolves() throws {
        // A value type in the weak scope behaves as transient; the permanent its factory builds must still be
        // published, so another thread can resolve it.
        let container = Container()
        let sharedBuilds = Counter()
        container.register(FIInner.self) { _ in
            sharedBuilds.increment()
            return FIInner()
        }.inObjectScope(.permanent)
        container.register(FIValue.self) { r in FIValue(inner: try r.resolve()) }.inObjectScope(.weak)

        let value = try container.resolve(FIValue.self)
        let fromAnotherThread = onAnotherThread(timeout: 5) { try? container.resolve(FIInner.self) }
        #expect(fromAnotherThread != nil, "resolving the permanent on another thread timed out: it was never published")
        #expect(fromAnotherThread.flatMap { $0 } === value.inner)
        #expect(sharedBuilds.value == 1)
    }

    @Test func aFailingHookKeepsNoWeakOrPermanentInstance() throws {
        let container = Container()
        let hookFails = Flag(true)
        let builds = Counter()
        container.register(FIInner.self) { _ in
            builds.increment()
            return FIInner()
        }.inObjectScope(.weak)
        container.register(FIOuter.self) { r in FIOuter(inner: try r.resolve()) }
            .inObjectScope(.permanent)
            .initCompleted { _, _ in if hookFails.isOn { throw TestFailure("hook") } }

        let error = resolutionError { try container.resolve(FIOuter.self) }
        #expect(error?.kind == .factoryFailed)
        #expect((error?.underlying as? TestFailure)?.message == "hook")
        #expect(error?.key == ServiceKey(FIOuter.self))
        #expect(error?.path == [ServiceKey(FIOuter.self)])

        hookFails.isOn = false
        let outer = try container.resolve(FIOuter.self)
        #expect(builds.value == 2, "the weak Inner of the failed resolve was kept")
        #expect(try container.resolve(FIOuter.self) === outer)
        #expect(try container.resolve(FIInner.self) === outer.inner)
    }

    // MARK: The path of a failure

    @Test func aFaultDeepInTheGraphNamesItsPath() {
        let container = Container()
        let child = container.makeChild()
        container.register(FIInner.self) { _ in throw TestFailure("deep") }
        container.register(FIOuter.self) { r in FIOuter(inner: try r.resolve()) }.inObjectScope(.transient)
        container.register(FIProbe.self, name: "top") { r in
            _ = try r.resolve(FIOuter.self)
            return FIProbe()
        }
        let error = resolutionError { try child.resolve(FIProbe.self, name: "top") }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.key == ServiceKey(FIInner.self))
        #expect(
            error?.path == [ServiceKey(FIProbe.self, name: "top"), ServiceKey(FIOuter.self), ServiceKey(FIInner.self)])
        #expect(error.map { "\($0)" }?.contains("FIProbe(name: \"top\") → FIOuter → FIInner") == true)
    }

    @Test func aFailingHookOfAnInstanceBuiltInAHookNamesTheWholePath() {
        // Outer's hook resolves Probe; Probe's own hook throws. The path is the one that created Probe: Outer's
        // path, then Probe.
        let container = Container()
        container.register(FIInner.self) { _ in FIInner() }
        container.register(FIProbe.self) { _ in FIProbe() }
            .initCompleted { _, _ in throw TestFailure("probe hook") }
        container.register(FIOuter.self) { r in FIOuter(inner: try r.resolve()) }
            .initCompleted { r, _ in _ = try r.resolve(FIProbe.self) }
        let error = resolutionError { try container.resolve(FIOuter.self) }
        #expect(error?.key == ServiceKey(FIProbe.self))
        #expect(error?.path == [ServiceKey(FIOuter.self), ServiceKey(FIProbe.self)])
        #expect((error?.underlying as? TestFailure)?.message == "probe hook")
    }

    // MARK: Failures and other threads

    @Test func aThreadWaitingForAFailedBuildBuildsItItself() throws {
        // Thread 1 builds a slow permanent and fails; thread 2, waiting for it meanwhile, then builds it itself.
        let container = Container()
        let attempts = Counter()
        let entered = DispatchSemaphore(value: 0)
        container.register(FIInner.self) { _ in
            let attempt = attempts.increment()
            if attempt == 1 {
                entered.signal()
                Thread.sleep(forTimeInterval: 0.1)
                throw TestFailure("first attempt")
            }
            return FIInner()
        }.inObjectScope(.permanent)

        let successes = AtomicCounter()
        let finished = runThreads(2) { index in
            if index == 1 { entered.wait() }
            if (try? container.resolve(FIInner.self)) != nil { successes.add() }
        }
        #expect(finished, "threads did not finish: a waiter was never woken")
        #expect(successes.value == 1)
        #expect(attempts.value == 2)
    }
}

private final class FIInner: Sendable {
    static let lastBuilt = Box<WeakRef<FIInner>>()
}

private final class FIOuter: Sendable {
    let inner: FIInner
    init(inner: FIInner) { self.inner = inner }
}

private final class FIProbe: Sendable {}

private struct FIValue: Sendable {
    let inner: FIInner
}
