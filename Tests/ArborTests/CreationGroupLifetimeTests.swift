import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// Two resolutions that enter a cycle of permanent services from opposite ends merge into one creation group, which
// publishes (or abandons) every instance its members built once the last of them finishes. A member that fails, or
// whose task is cancelled while it waits, leaves at once; its caller may then drop the container it resolved in —
// a request's child, say — while the group still holds the storage of a per-container instance that member built
// there. These tests drop that container before the group completes and check that the group keeps it until then:
// the group's last step reads and writes the storage under the container's lock, which goes with the container.

private final class GLCycleA: @unchecked Sendable {
    var b: GLCycleB?
}

private final class GLCycleB: @unchecked Sendable {
    var a: GLCycleA?
}

/// A request's unit of work: a per-container service that needs one end of the cycle.
private protocol GLUnitOfWork: AnyObject, Sendable {
    var a: GLCycleA { get }
}

private final class GLUnit: GLUnitOfWork, @unchecked Sendable {
    let a: GLCycleA
    init(a: GLCycleA) { self.a = a }
}

private struct GLFailure: Error {}

/// What the two threads of a round saw, and the signals that order them.
private final class GLRound: @unchecked Sendable {
    /// Both ends' factories wait here until both have claimed their storage, so the two resolutions meet in the cycle.
    let bothBuilding = DispatchGroup()
    /// B's hook waits here, after the merge, until the first thread has dropped its container.
    let holdSecond = DispatchSemaphore(value: 0)
    /// Signalled by B's hook once it has A, from the merged group: a failing unit fails only then, so the second
    /// member is still in the group when the first leaves it.
    let secondHasA = DispatchSemaphore(value: 0)
    let releases = Counter()
    private let lock = NSLock()
    private var errors: [Int: (any Error)?] = [:]
    private weak var droppedContainer: Container?
    private var unitBuilder: CreationCoordinator.Member?
    /// Whether the dropped container was still alive while the group was open.
    private(set) var keptWhileOpen: Bool?

    init() {
        bothBuilding.enter()
        bothBuilding.enter()
    }

    func arriveAndWaitForBothBuilding() {
        bothBuilding.leave()
        bothBuilding.wait()
    }

    func record(_ thread: Int, _ error: (any Error)?) {
        lock.withLock { errors[thread] = error }
    }

    func error(_ thread: Int) -> (any Error)? {
        lock.withLock { errors[thread] ?? nil }
    }

    func hasRecorded(_ thread: Int) -> Bool {
        lock.withLock { errors.keys.contains(thread) }
    }

    func watchDropped(_ container: Container) {
        lock.withLock { droppedContainer = container }
    }

    var droppedContainerIsAlive: Bool {
        lock.withLock { droppedContainer != nil }
    }

    /// Notes whether the dropped container is alive, and lets the second thread finish.
    func releaseSecond() {
        let alive = droppedContainerIsAlive
        lock.withLock { keptWhileOpen = alive }
        holdSecond.signal()
    }

    func recordUnitBuilder(_ resolver: any Resolver) {
        guard let resolution = resolver as? Resolution else { return }
        lock.withLock { unitBuilder = resolution.member }
    }

    /// Whether the resolution that built the unit waits for the rest of its group, suspended.
    var unitBuilderWaitsForItsGroup: Bool {
        guard let member = lock.withLock({ unitBuilder }) else { return false }
        let coordinator = CreationCoordinator.shared
        return coordinator.lock.withLock {
            coordinator.waits.values.contains { wait in
                guard case .completion = wait.target else { return false }
                return wait.member == member && member.thread.isUnbound
            }
        }
    }
}

/// A root with the cycle A ⇄ B, wired by hooks, and a per-container unit of work that needs A. Hooks run when the
/// resolution's factories have returned: the unit's hook resolves B, so whichever hook runs first, the first thread
/// meets the second in the cycle and their groups merge; with `unitFails`, it then throws.
private func makeRoot(_ round: GLRound, unitFails: Bool) -> Container {
    let root = Container()
    root.register(GLCycleA.self) { _ in
        round.arriveAndWaitForBothBuilding()
        return GLCycleA()
    }
    .inObjectScope(.permanent)
    .initCompleted { r, a in a.b = try r.resolve(GLCycleB.self) }
    root.register(GLCycleB.self) { _ in
        round.arriveAndWaitForBothBuilding()
        return GLCycleB()
    }
    .inObjectScope(.permanent)
    .initCompleted { r, b in
        b.a = try r.resolve(GLCycleA.self)
        round.secondHasA.signal()
        round.holdSecond.wait()
    }
    root.register((any GLUnitOfWork).self) { r in
        round.recordUnitBuilder(r)
        return GLUnit(a: try r.resolve(GLCycleA.self))
    }
    .inObjectScope(.perContainer)
    .initCompleted { r, _ in
        _ = try r.resolve(GLCycleB.self)
        guard unitFails else { return }
        round.secondHasA.wait()
        throw GLFailure()
    }
    .onRelease { _ in round.releases.increment() }
    return root
}

/// Runs `resolve` in a new child of `root`, records how it ended as thread 0's, and drops the child.
private func resolveInADroppedChild(of root: Container, _ round: GLRound, _ resolve: (Container) throws -> Void) {
    let child = root.makeChild()
    round.watchDropped(child)
    do {
        try resolve(child)
        round.record(0, nil)
    } catch {
        round.record(0, error)
    }
}

/// Resolves B from `root`, as the second thread, and records how it ended.
private func resolveTheOtherEnd(from root: Container, _ round: GLRound) {
    do {
        _ = try root.resolve(GLCycleB.self)
        round.record(1, nil)
    } catch {
        round.record(1, error)
    }
}

@Suite struct CreationGroupLifetimeTests {
    /// The first thread resolves, in a child, the unit of work (and so A), whose hook fails after the merge; the
    /// second resolves B from the root and is held after the merge. The first leaves the group with its failure and
    /// drops the child; the group abandons the unit's build when the second finishes.
    @Test func aFailedMemberDropsItsContainerBeforeTheGroupAbandonsItsBuilds() {
        for _ in 0..<20 {
            let round = GLRound()
            let root = makeRoot(round, unitFails: true)
            let finished = runThreads(2) { index in
                if index == 0 {
                    resolveInADroppedChild(of: root, round) { child in _ = try child.resolve((any GLUnitOfWork).self) }
                    // The second thread's group holds the unit's build in the dropped child: let it finish.
                    round.releaseSecond()
                    return
                }
                resolveTheOtherEnd(from: root, round)
            }
            #expect(finished, "the two resolutions finished")
            #expect(
                (round.error(0) as? ResolutionError)?.underlying is GLFailure, "\(String(describing: round.error(0)))")
            #expect(round.error(1) != nil, "the second member fails with its group")
            #expect(round.keptWhileOpen == true, "the group kept the dropped child until it completed")
            #expect(!round.droppedContainerIsAlive, "the group let the child go once it completed")
            #expect(round.releases.value == 0, "an abandoned unit of work was never published, so never released")
        }
    }

    /// The first resolution, an `async` one in a child, builds the unit of work and waits for its group, suspended;
    /// its task is cancelled, so it stops waiting and its caller drops the child. The group publishes the unit into
    /// the child when the second thread finishes, and then lets the child go: its per-container unit is released
    /// with its hook, as for any child dropped without `close()`.
    @Test func aCancelledMemberDropsItsContainerBeforeTheGroupPublishesItsBuilds() async {
        for index in 0..<20 {
            let round = GLRound()
            let root = makeRoot(round, unitFails: false)
            Thread { resolveTheOtherEnd(from: root, round) }.start()
            let first = Task.detached {
                let child = root.makeChild()
                round.watchDropped(child)
                do {
                    _ = try await child.resolve((any GLUnitOfWork).self)
                    round.record(0, nil)
                } catch {
                    round.record(0, error)
                }
            }
            #expect(await poll { round.unitBuilderWaitsForItsGroup }, "round \(index): the first waits for its group")
            first.cancel()
            await first.value
            round.releaseSecond()
            #expect(await poll { round.hasRecorded(1) }, "round \(index): the second resolution finished")
            #expect(isCancellation(round.error(0)), "round \(index): \(String(describing: round.error(0)))")
            #expect(round.error(1) == nil, "round \(index): the group published")
            #expect(round.keptWhileOpen == true, "round \(index): the group kept the dropped child until it completed")
            #expect(!round.droppedContainerIsAlive, "round \(index): the group let the child go once it completed")
            #expect(round.releases.value == 1, "round \(index): the unit went with the child, its hook ran once")
        }
    }
}
