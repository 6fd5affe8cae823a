import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// Tasks that need an instance another task is building wait for it suspended, on Swift's cooperative pool: no thread
// blocks, a permanent factory runs once in every interleaving, opposite-end cycles of async permanent services finish
// together, and a cancelled task stops waiting and leaves nothing half-built behind.

private final class WSlow: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}

private final class WNode: @unchecked Sendable {
    let name: String
    var next: WNode?
    init(_ name: String) { self.name = name }
}

@Suite struct AsyncWaitingTests {
    @Test func aThousandTasksWaitSuspendedForOnePermanentInstance() async throws {
        let container = Container()
        let builds = Counter()
        let waiting = WaitingSeen()
        container.register(WSlow.self) { [unowned container] _ async throws in
            let serial = builds.increment()
            let storage = try #require(container.entries.first?.storage)
            // While it sleeps, the other 999 wait: suspended, each a continuation, and none holding a thread.
            let deadline = ContinuousClock.now + .seconds(Watchdog.patience)
            while ContinuousClock.now < deadline {
                let counts = CreationCoordinator.shared.waitingCounts(for: storage)
                waiting.record(counts)
                if counts.suspended >= 999 { break }
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            try await Task.sleep(nanoseconds: 50_000_000)
            return WSlow(serial: serial)
        }
        .inObjectScope(.permanent)

        let instances = try await withThrowingTaskGroup(of: WSlow.self) { group in
            for _ in 0..<1_000 {
                group.addTask { try await container.resolve(WSlow.self) }
            }
            return try await group.reduce(into: [WSlow]()) { $0.append($1) }
        }
        #expect(instances.count == 1_000)
        #expect(instances.allSatisfy { $0 === instances[0] }, "every task got the one instance")
        #expect(builds.value == 1, "the factory ran \(builds.value) times")
        #expect(waiting.mostSuspended >= 999, "at most \(waiting.mostSuspended) tasks were seen suspended")
        #expect(waiting.mostBlocked == 0, "\(waiting.mostBlocked) threads were seen blocked")
        // That the waits overlapped, rather than ran one after another, is what `mostSuspended` shows: 999 tasks were
        // suspended at one moment. (A bound on the elapsed time said the same less reliably: the suites run side by
        // side, and on two cores the others can keep the cooperative threads busy for a minute.)
    }

    @Test(arguments: [2, 3])
    func tasksEnteringACycleOfAsyncPermanentServicesFromOppositeEndsFinishItTogether(nodes: Int) async throws {
        for round in 0..<50 {
            let container = Container()
            let builds = (0..<nodes).map { _ in Counter() }
            for index in 0..<nodes {
                container.register(WNode.self, name: "\(index)") { _ async in
                    builds[index].increment()
                    await Task.yield()
                    return WNode("\(index)")
                }
                .inObjectScope(.permanent)
                .initCompleted { r, node async throws in
                    node.next = try await r.resolve(WNode.self, name: "\((index + 1) % nodes)")
                }
            }
            let results = try await withThrowingTaskGroup(of: WNode.self) { group in
                for index in 0..<nodes {
                    group.addTask { try await container.resolve(WNode.self, name: "\(index)") }
                }
                return try await group.reduce(into: [WNode]()) { $0.append($1) }
            }
            #expect(builds.allSatisfy { $0.value == 1 }, "round \(round): factory runs \(builds.map(\.value))")
            for node in results {
                let next = try await container.resolve(WNode.self, name: node.next?.name ?? "?")
                #expect(node.next === next, "round \(round): node \(node.name) is wired to the node the others see")
            }
            for node in results { node.next = nil }
        }
    }

    @Test func aCancelledWaitingTaskStopsWaitingAndTheOthersGoOn() async throws {
        let container = Container()
        let started = AsyncSignal()
        let finish = AsyncSignal()
        let builds = Counter()
        container.register(WSlow.self) { _ async in
            let serial = builds.increment()
            await started.signal()
            await finish.wait()
            return WSlow(serial: serial)
        }
        .inObjectScope(.permanent)

        let builder = Task { try await container.resolve(WSlow.self) }
        await started.wait()
        let cancelled = Task { try await container.resolve(WSlow.self) }
        let patient = Task { try await container.resolve(WSlow.self) }
        try await Task.sleep(nanoseconds: 20_000_000)  // Both wait by now; either way the outcome must hold.
        cancelled.cancel()
        let cancellation = await cancelled.result
        #expect(throws: CancellationError.self) { try cancellation.get() }
        await finish.signal()
        let built = try await builder.value
        #expect(try await patient.value === built)
        #expect(builds.value == 1)
    }

    @Test func aCancelledBuildLeavesNothingAndTheNextResolveBuildsAgain() async throws {
        let container = Container()
        let builds = Counter()
        container.register(WSlow.self) { _ async throws in
            let serial = builds.increment()
            // The first build ends only by its cancellation: an hour, not ten seconds, which a test starved on a
            // loaded machine outlasted once, and then got the first instance.
            try await Task.sleep(nanoseconds: serial == 1 ? 3_600_000_000_000 : 0)
            return WSlow(serial: serial)
        }
        .inObjectScope(.permanent)

        let first = Task { try await container.resolve(WSlow.self) }
        while builds.value == 0 { await Task.yield() }
        first.cancel()
        let outcome = await first.result
        #expect(throws: (any Error).self) { try outcome.get() }
        if case .failure(let error as ResolutionError) = outcome {
            #expect(error.reason.underlyingError is CancellationError, "the factory's cancellation, wrapped")
        }
        let instance = try await container.resolve(WSlow.self)
        #expect(instance.serial == 2, "nothing half-built was kept")
    }

    @Test func aSynchronousResolveOfAPermanentAnotherTaskBuildsAsynchronouslyWaitsForIt() async throws {
        // The synchronous resolve blocks its thread (it cannot suspend); the async build goes on on another.
        let container = Container()
        let started = AsyncSignal()
        container.register(WSlow.self) { _ async throws in
            await started.signal()
            try await Task.sleep(nanoseconds: 20_000_000)
            return WSlow(serial: 1)
        }
        .inObjectScope(.permanent)
        let builder = Task { try await container.resolve(WSlow.self) }
        await started.wait()
        let fromThread = await withCheckedContinuation { (continuation: CheckedContinuation<WSlow?, Never>) in
            Thread { continuation.resume(returning: try? container.resolve(WSlow.self)) }.start()
        }
        #expect(fromThread === (try await builder.value))
    }
}

/// The most resolutions seen waiting at once, blocked and suspended.
private final class WaitingSeen: @unchecked Sendable {
    private let lock = NSLock()
    private var blocked = 0
    private var suspended = 0

    func record(_ counts: (blocked: Int, suspended: Int)) {
        lock.withLock {
            blocked = max(blocked, counts.blocked)
            suspended = max(suspended, counts.suspended)
        }
    }

    var mostBlocked: Int { lock.withLock { blocked } }
    var mostSuspended: Int { lock.withLock { suspended } }
}

/// A one-shot signal tasks can wait for.
actor AsyncSignal {
    private var isSignalled = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func signal() {
        isSignalled = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func wait() async {
        if isSignalled { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}
