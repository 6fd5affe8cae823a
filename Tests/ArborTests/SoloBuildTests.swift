import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// A resolution that builds a permanent, weak or per-container instance nothing else needs does it *solo*, without
// the creation coordinator's lock; a resolution on another thread that needs the instance meanwhile hands the build
// to the coordinator (promotes it) and waits for it like for any other. These tests make the other thread arrive at
// each step of a solo build — while the factory runs, after it returned, while a hook runs — and check that every
// thread gets the one instance, each factory runs once (or again only after a failure), and the builder leaves
// nothing behind in the coordinator.

/// What a service registered under a protocol type offers.
private protocol SBLabelled: AnyObject, Sendable {
    var label: String { get }
}

private final class SBNode: SBLabelled, @unchecked Sendable {
    let label: String
    let dependency: SBNode?
    /// How many times an `initCompleted` hook ran on it.
    let wired = Counter()
    init(_ label: String, dependency: SBNode? = nil) {
        self.label = label
        self.dependency = dependency
    }
}

/// One test's round: what its threads saw, the signal that lets the second thread go, and the factory runs.
private final class SBRound: @unchecked Sendable {
    private let lock = NSLock()
    private var builders: [CreationCoordinator.Member] = []
    private var results: [Int: Result<SBNode, any Error>] = [:]
    /// Signalled by the first thread, inside a build, when the second thread may go.
    let started = DispatchSemaphore(value: 0)
    let builds = Counter()

    /// Records the resolution that builds, and lets the second thread go.
    func building(with resolver: any Resolver) {
        recordBuilder(resolver)
        started.signal()
    }

    func recordBuilder(_ resolver: any Resolver) {
        guard let resolution = resolver as? Resolution else { return }
        lock.withLock { builders.append(resolution.member) }
    }

    func record(_ thread: Int, _ result: Result<SBNode, any Error>) {
        lock.withLock { results[thread] = result }
    }

    func node(_ thread: Int) -> SBNode? {
        lock.withLock { try? results[thread]?.get() }
    }

    func error(_ thread: Int) -> (any Error)? {
        lock.withLock {
            guard case .failure(let error)? = results[thread] else { return nil }
            return error
        }
    }

    /// Whether every resolution that built left its solo builds' groups behind, as it must not.
    var leftNothingBehind: Bool {
        lock.withLock { builders }.allSatisfy { !CreationCoordinator.shared.hasPromotedGroup(for: $0) }
    }

    /// Thread 0 resolves `first`; once `started` is signalled, thread 1 resolves `second`.
    func run(_ container: Container, first: String, second: String) -> Bool {
        runThreads(2) { thread in
            if thread == 1 { _ = self.started.wait(timeout: .now() + 10) }
            self.record(thread, Result { try container.resolve(SBNode.self, name: thread == 0 ? first : second) })
        }
    }
}

/// The storage of the permanent registration of `SBNode` named `name` in `container`.
private func storage(of name: String?, in container: Container) -> InstanceStorage? {
    container.entries.first { $0.key == ServiceKey(SBNode.self, name: name) }?.storage
}

/// Registers the permanent `SBNode` "x", whose first build lets the second thread go and returns (or throws) once
/// that thread waits for it; later builds return at once.
private func registerMetBuild(in container: Container, round: SBRound, failing: Bool) {
    container.register(SBNode.self, name: "x") { [unowned container] r in
        guard round.builds.increment() == 1 else { return SBNode("x") }
        round.building(with: r)
        #expect(waitUntilAThreadWaits(on: storage(of: "x", in: container)))
        if failing { throw TestFailure("the first build fails") }
        return SBNode("x")
    }
    .inObjectScope(.permanent)
}

@Suite struct SoloBuildTests {
    @Test func aThreadThatMeetsASoloBuildWaitsForItAndGetsTheSameInstance() throws {
        let container = Container()
        let round = SBRound()
        registerMetBuild(in: container, round: round, failing: false)

        #expect(round.run(container, first: "x", second: "x"))
        let first = try #require(round.node(0))
        #expect(round.node(1) === first)
        #expect(try container.resolve(SBNode.self, name: "x") === first)
        #expect(round.builds.value == 1)
        #expect(round.leftNothingBehind)
    }

    @Test func whenAHandedOverBuildFailsTheWaitingThreadBuildsTheInstanceItself() throws {
        let container = Container()
        let round = SBRound()
        registerMetBuild(in: container, round: round, failing: true)

        #expect(round.run(container, first: "x", second: "x"))
        let error = try #require(round.error(0) as? ResolutionError)
        #expect(ReasonKind(error.reason) == .factoryFailed)
        let built = try #require(round.node(1))
        #expect(try container.resolve(SBNode.self, name: "x") === built)
        #expect(round.builds.value == 2)
        #expect(round.leftNothingBehind)
    }

    @Test func aResolutionThatCatchesTheFailureOfAHandedOverBuildFinishesCleanly() throws {
        let container = Container()
        let round = SBRound()
        registerMetBuild(in: container, round: round, failing: true)
        // Resolves "x", and goes on without it when that fails.
        container.register(SBNode.self, name: "outer") { r in
            SBNode("outer", dependency: try? r.resolve(SBNode.self, name: "x"))
        }
        .inObjectScope(.transient)

        #expect(round.run(container, first: "outer", second: "x"))
        let outer = try #require(round.node(0))
        #expect(outer.dependency == nil)
        let built = try #require(round.node(1))
        #expect(try container.resolve(SBNode.self, name: "x") === built)
        #expect(round.builds.value == 2)
        #expect(round.leftNothingBehind)
    }

    /// `x` depends on `y`, both permanent; thread 1 arrives for `met` while thread 0 is still inside `x`'s factory or
    /// hook. The builder publishes what nobody met by itself and the rest with the group made for it.
    @Test(arguments: ["y", "x"])
    func aBuilderPublishesTheBuildsNobodyMetAndTheOnesThatWereMet(met: String) throws {
        let container = Container()
        let round = SBRound()
        container.register(SBNode.self, name: "y") { _ in
            round.builds.increment()
            return SBNode("y")
        }
        .inObjectScope(.permanent)
        let x = container.register(SBNode.self, name: "x") { r in
            round.builds.increment()
            round.recordBuilder(r)
            return SBNode("x", dependency: try r.resolve(SBNode.self, name: "y"))
        }
        .inObjectScope(.permanent)
        // Thread 1 arrives once both factories have returned, while `x` is not yet published.
        x.initCompleted { [unowned container] _, _ in
            round.started.signal()
            #expect(waitUntilAThreadWaits(on: storage(of: met, in: container)))
        }

        #expect(round.run(container, first: "x", second: met))
        let built = try #require(round.node(0))
        let y = try #require(built.dependency)
        #expect(round.node(1) === (met == "x" ? built : y))
        #expect(try container.resolve(SBNode.self, name: "x") === built)
        #expect(try container.resolve(SBNode.self, name: "y") === y)
        #expect(round.builds.value == 2)
        #expect(round.leftNothingBehind)
    }

    @Test func aRequestChildsUnitOfWorkMetByAnotherThreadIsBuiltOnce() throws {
        let app = Container()
        let round = SBRound()
        let request = app.makeChild()
        app.register(SBNode.self, name: "work") { [unowned request] r in
            round.builds.increment()
            round.building(with: r)
            let entry = try #require(app.entries.first { $0.key == ServiceKey(SBNode.self, name: "work") })
            #expect(waitUntilAThreadWaits(on: request.perContainerStorage(for: entry)))
            return SBNode("work")
        }
        .inObjectScope(.perContainer)

        #expect(round.run(request, first: "work", second: "work"))
        let work = try #require(round.node(0))
        #expect(round.node(1) === work)
        #expect(try request.resolve(SBNode.self, name: "work") === work)
        #expect(round.builds.value == 1)
        #expect(round.leftNothingBehind)
    }
}

/// A weak service whose instance comes and goes, and a graph that resolves it twice.
private final class SBPair: @unchecked Sendable {
    let left: SBNode
    let right: SBNode
    init(left: SBNode, right: SBNode) {
        self.left = left
        self.right = right
    }
}

extension SoloBuildTests {
    /// Threads race to build a weak instance that keeps dying: some build it solo, others meet the build, and others
    /// find it empty and claim it through the coordinator at the moment a solo build claims it.
    @Test func threadsRacingForAWeakInstanceThatComesAndGoesShareItWithinEachGraph() {
        let container = Container()
        container.register(SBNode.self, name: "scratch") { _ in SBNode("scratch") }.inObjectScope(.weak)
        container.register(SBNode.self, name: "part") { r in
            SBNode("part", dependency: try r.resolve(SBNode.self, name: "scratch"))
        }
        .inObjectScope(.transient)
        container.register(SBPair.self) { r in
            SBPair(left: try r.resolve(SBNode.self, name: "part"), right: try r.resolve(SBNode.self, name: "part"))
        }
        .inObjectScope(.transient)

        let problems = ProblemLog()
        let finished = runThreads(4) { _ in
            for _ in 0..<3_000 {
                do {
                    let pair = try container.resolve(SBPair.self)
                    problems.check(
                        pair.left.dependency === pair.right.dependency, "one graph got two weak instances")
                } catch {
                    problems.record("resolve threw \(error)")
                }
            }
        }
        #expect(finished, "the threads did not finish within the timeout")
        problems.expectNone()
    }
}

/// `container.resolve(SBNode.self)` by the synchronous engine: in an `async` function the call would pick the `async`
/// one.
private func resolveSynchronously(_ container: Container, name: String? = nil) throws -> SBNode {
    try container.resolve(SBNode.self, name: name)
}

/// `resolveSynchronously`, for the service registered under its protocol.
private func resolveLabelledSynchronously(_ container: Container) throws -> any SBLabelled {
    try container.resolve((any SBLabelled).self)
}

// A solo build that ends its resolution — the outermost build, no hook to run, nothing else claimed, nothing
// watching — is recorded and published in one step (`CreationCoordinator.builtAndPublished`), where the others are
// published when the resolution completes. These check that step: what it publishes, what it releases when the
// container closed during the factory, and threads that meet it.
extension SoloBuildTests {
    @Test(arguments: [false, true])
    func aPermanentBuildWhoseContainerClosesDuringItsFactoryIsReleasedOnceAndNotKept(awaiting: Bool) async throws {
        let app = Container()
        let child = app.makeChild()
        let releases = Counter()
        child.register(SBNode.self) { [unowned child] _ in
            child.close()
            return SBNode("closing")
        }
        .inObjectScope(.permanent)
        .onRelease { _ in releases.increment() }

        let node: SBNode
        if awaiting { node = try await child.resolve(SBNode.self) } else { node = try resolveSynchronously(child) }
        #expect(node.label == "closing")
        #expect(releases.value == 1, "the instance built while its container closed is released at once")
        #expect(storage(of: nil, in: child)?.holds(node) == false)
        #expect(throws: ResolutionError.self) { try child.resolve(SBNode.self) }
    }

    @Test(arguments: [false, true])
    func aWeakInstanceBuiltAtTheTopLevelIsSharedWhileHeldAndBuiltAgainAfter(awaiting: Bool) async throws {
        let container = Container()
        let builds = Counter()
        container.register(SBNode.self) { _ in
            builds.increment()
            return SBNode("weak")
        }
        .inObjectScope(.weak)
        let resolve: () async throws -> SBNode = {
            if awaiting { return try await container.resolve(SBNode.self) }
            return try resolveSynchronously(container)
        }

        var first: SBNode? = try await resolve()
        #expect(try await resolve() === first)
        #expect(builds.value == 1, "a held weak instance is shared")
        first = nil
        _ = try await resolve()
        #expect(builds.value == 2, "a weak instance nothing holds is built again")
    }

    @Test(arguments: [false, true])
    func aWeakBuildWhoseContainerClosesDuringItsFactoryIsHandedOverAndNotKept(awaiting: Bool) async throws {
        let app = Container()
        let child = app.makeChild()
        child.register(SBNode.self) { [unowned child] _ in
            child.close()
            return SBNode("closing")
        }
        .inObjectScope(.weak)

        var node: SBNode? =
            if awaiting { try await child.resolve(SBNode.self) } else { try resolveSynchronously(child) }
        #expect(node?.label == "closing")
        weak let built = node
        node = nil
        #expect(built == nil, "the closed container keeps no reference to it")
        #expect(throws: ResolutionError.self) { try child.resolve(SBNode.self) }
    }

    @Test(arguments: [false, true])
    func aWeakInstanceRegisteredUnderAProtocolIsSharedWhileHeld(awaiting: Bool) async throws {
        let container = Container()
        let builds = Counter()
        container.register((any SBLabelled).self) { _ in
            builds.increment()
            return SBNode("behind a protocol")
        }
        .inObjectScope(.weak)
        let resolve: () async throws -> any SBLabelled = {
            if awaiting { return try await container.resolve((any SBLabelled).self) }
            return try resolveLabelledSynchronously(container)
        }

        var first: (any SBLabelled)? = try await resolve()
        #expect(try await resolve() === first)
        #expect(builds.value == 1, "a held weak instance is shared, whatever type it is registered under")
        first = nil
        #expect(try await resolve().label == "behind a protocol")
        #expect(builds.value == 2)
    }

    @Test func aTopLevelBuildWithAnInitCompletedHookRunsItBeforeAnyThreadSeesTheInstance() throws {
        let container = Container()
        container.register(SBNode.self) { _ in SBNode("hooked") }
            .inObjectScope(.permanent)
            .initCompleted { _, node in node.wired.increment() }
        let node = try container.resolve(SBNode.self)
        #expect(node.wired.value == 1)
        #expect(try container.resolve(SBNode.self) === node)
        #expect(node.wired.value == 1)
    }

    /// Threads resolve a weak instance at the top level, and again while they hold the first: the second is the same
    /// instance, whichever thread built it and however the builds met.
    @Test func topLevelWeakResolvesOnManyThreadsNeverReplaceAnInstanceThatIsHeld() {
        let container = Container()
        container.register(SBNode.self) { _ in SBNode("weak") }.inObjectScope(.weak)
        let problems = ProblemLog()
        let finished = runThreads(4) { _ in
            for _ in 0..<(runsUnderSanitizer ? 2_000 : 20_000) {
                do {
                    let held = try container.resolve(SBNode.self)
                    let again = try container.resolve(SBNode.self)
                    problems.check(held === again, "a held weak instance was replaced")
                } catch {
                    problems.record("resolve threw \(error)")
                }
            }
        }
        #expect(finished, "the threads did not finish within the timeout")
        problems.expectNone()
    }
}

// A top-level resolve reads a permanent or weak instance before it begins, and when there is none it claims the
// storage for its build in the same critical section (`InstanceStorage.loadHeld(as:protectedBy:claimingFor:claimed:)`),
// under the name the coordinator knows it by once it has begun. These check what that claim must leave behind when the
// build fails, and that the name is right where it differs from the thread's own: in an `async` resolution's code.
extension SoloBuildTests {
    @Test(arguments: [ObjectScope.permanent, .weak], [false, true])
    func aTopLevelBuildThatFailsLeavesItsStorageFreeForTheNextResolve(scope: ObjectScope, awaiting: Bool) async throws {
        let container = Container()
        let builds = Counter()
        container.register(SBNode.self) { _ in
            guard builds.increment() > 1 else { throw TestFailure("the first build fails") }
            return SBNode("second")
        }
        .inObjectScope(scope)
        let resolve: () async throws -> SBNode = {
            if awaiting { return try await container.resolve(SBNode.self) }
            return try resolveSynchronously(container)
        }

        await #expect(throws: ResolutionError.self) { _ = try await resolve() }
        let node = try await resolve()
        #expect(node.label == "second", "the failed build's claim was abandoned: the next resolve builds")
        #expect(try await resolve() === node)
        #expect(builds.value == 2)
        // From another thread too: a claim left behind would make it wait for a build that never ends.
        let round = SBRound()
        let finished = runThreads(1) { thread in
            round.record(thread, Result { try container.resolve(SBNode.self) })
        }
        #expect(finished, "another thread waited for the failed build's claim")
        #expect(round.node(0) === node)
    }

    @Test(arguments: [ObjectScope.permanent, .weak])
    func aSynchronousTopLevelBuildInsideAnAsyncResolutionIsPublishedOnce(scope: ObjectScope) async throws {
        let container = Container()
        let builds = Counter()
        container.register(SBNode.self, name: "inner") { _ in
            builds.increment()
            return SBNode("inner")
        }
        .inObjectScope(scope)
        // A synchronous factory of an `async` resolve, that resolves from the container itself: a top-level resolve
        // that begins in the `async` resolution's synchronous code, and claims under that resolution's thread.
        container.register(SBNode.self, name: "outer") { [unowned container] _ in
            SBNode("outer", dependency: try container.resolve(SBNode.self, name: "inner"))
        }
        .inObjectScope(.transient)

        let outer = try await container.resolve(SBNode.self, name: "outer")
        let inner = try #require(outer.dependency)
        #expect(try resolveSynchronously(container, name: "inner") === inner)
        #expect(try await container.resolve(SBNode.self, name: "inner") === inner)
        #expect(builds.value == 1, "the build was published, not left claimed")
        let innerStorage = try #require(storage(of: "inner", in: container))
        #expect(!CreationCoordinator.shared.isWaited(on: innerStorage))
    }
}
