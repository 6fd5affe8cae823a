import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// Tasks that wait for another task's build and are cancelled meanwhile: each stops waiting (or gets the instance),
// the build goes on, every task that gets an instance gets the one instance, and nothing deadlocks — cancelling a task
// runs its cancellation handler under the task's own lock, so nothing may be resumed while a lock that handler takes
// is held.

private final class CSlow: Sendable {}

private final class CNode: @unchecked Sendable {
    let name: String
    var next: CNode?
    init(_ name: String) { self.name = name }
}

@Suite struct CancelledWaiterTests {
    /// Two tasks enter a cycle of permanent services wired by hooks from opposite ends, so they finish it together;
    /// the first is cancelled while it waits for the other to finish. It throws `CancellationError`, as any cancelled
    /// wait does — not that "another resolution … failed, so none of them is kept": none failed, and both are kept.
    @Test func aTaskCancelledWhileItWaitsForTheOthersOfItsCycleThrowsCancellationError() async throws {
        let container = Container()
        let builds = Counter()
        let arrived = Counter()
        let bothBuilding = Gate()
        let aWired = Flag()
        let bHook = Gate()
        for (name, next) in [("a", "b"), ("b", "a")] {
            container.register(CNode.self, name: name) { _ async in
                builds.increment()
                if arrived.increment() == 2 { bothBuilding.open() }
                await bothBuilding.passAsync()
                return CNode(name)
            }
            .inObjectScope(.permanent)
            .initCompleted { r, node async throws in
                node.next = try await r.resolve(CNode.self, name: next)
                if name == "a" { aWired.isOn = true } else { await bHook.passAsync() }
            }
        }
        let a = Task { try await container.resolve(CNode.self, name: "a") }
        let b = Task { try await container.resolve(CNode.self, name: "b") }
        #expect(await poll { aWired.isOn && bHook.hasArrivals })
        a.cancel()
        let aResult = await a.result
        #expect(throws: CancellationError.self) { try aResult.get() }
        bHook.open()
        let nodeB = try await b.value
        let nodeA = try await container.resolve(CNode.self, name: "a")
        #expect(nodeA.next === nodeB && nodeB.next === nodeA, "the cycle was kept, wired")
        #expect(builds.value == 2)
    }

    @Test func cancellingTasksThatWaitForAnAsyncBuildNeverDeadlocks() async throws {
        let watchdog = Watchdog("cancelling tasks that wait for an async permanent's build", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let seed = TestEnvironment.baseSeed
        var generator = SplitMix64(seed: seed)
        let rounds = runsUnderSanitizer ? 600 : 3_000
        var cancelled = 0
        var delivered = 0
        for round in 0..<rounds {
            let container = Container()
            let builds = Counter()
            let sleep = UInt64(generator.int(in: 0...200))
            // Every tenth round holds the build at a gate until the tasks have been cancelled while they wait, so
            // that edge is reached however the machine schedules the tasks; the others leave it to timing.
            let gate = round % 10 == 0 ? Gate() : nil
            container.register(CSlow.self) { _ async in
                builds.increment()
                if let gate {
                    await gate.passAsync()
                } else {
                    try? await Task.sleep(nanoseconds: sleep * 1_000)
                }
                return CSlow()
            }
            .inObjectScope(.permanent)
            let tasks = (0..<20).map { _ in Task { try await container.resolve(CSlow.self) } }
            if let gate {
                let storage = try #require(container.entries.first?.storage)
                let suspended = { CreationCoordinator.shared.waitingCounts(for: storage).suspended }
                // One task builds; the other nineteen wait for it.
                #expect(await poll { suspended() == 19 }, "round \(round): \(suspended()) tasks wait")
                for task in tasks { task.cancel() }
                // Each waiter resumes, sees its cancellation and stops waiting before the build can finish.
                #expect(await poll { suspended() == 0 }, "round \(round): the cancelled waiters stopped waiting")
                gate.open()
            } else {
                try? await Task.sleep(nanoseconds: UInt64(generator.int(in: 0...300)) * 1_000)
                for task in tasks { task.cancel() }
            }
            var instances: [CSlow] = []
            for task in tasks {
                switch await task.result {
                case .success(let instance):
                    instances.append(instance)
                case .failure(let error):
                    #expect(isCancellation(error), "round \(round), seed \(TestEnvironment.hex(seed)): \(error)")
                    cancelled += 1
                }
            }
            if gate != nil {
                // The builder finishes its build; every task that waited for it stopped when it was cancelled.
                #expect(instances.count == 1, "round \(round): \(instances.count) tasks got the instance")
            }
            delivered += instances.count
            #expect(instances.allSatisfy { $0 === instances[0] }, "round \(round): one instance for every task")
            #expect(builds.value <= 1 || instances.isEmpty, "round \(round): the factory ran \(builds.value) times")
            // Whatever was cancelled, the registration still works afterwards.
            let after = try await container.resolve(CSlow.self)
            if let first = instances.first { #expect(after === first, "round \(round): the published instance") }
            watchdog.progress()
        }
        // Both outcomes happened: the rounds exercised cancellation during waits, not only before or after them.
        #expect(cancelled > 0 && delivered > 0, "cancelled \(cancelled), delivered \(delivered)")
    }

    @Test func cancellingTasksWaitingInACycleOfAsyncPermanentsNeverDeadlocks() async throws {
        let watchdog = Watchdog(
            "cancelling tasks in an opposite-end cycle of async permanents", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        var generator = SplitMix64(seed: TestEnvironment.baseSeed)
        let rounds = runsUnderSanitizer ? 300 : 1_500
        for round in 0..<rounds {
            let container = Container()
            for index in 0..<2 {
                container.register(CNode.self, name: "\(index)") { _ async in
                    await Task.yield()
                    return CNode("\(index)")
                }
                .inObjectScope(.permanent)
                .initCompleted { r, node async throws in
                    node.next = try await r.resolve(CNode.self, name: "\(1 - index)")
                }
            }
            let tasks = (0..<8).map { index in Task { try await container.resolve(CNode.self, name: "\(index % 2)") } }
            try? await Task.sleep(nanoseconds: UInt64(generator.int(in: 0...200)) * 1_000)
            for (index, task) in tasks.enumerated() where index % 3 != 0 { task.cancel() }
            for task in tasks {
                if case .failure(let error) = await task.result {
                    // A wait cancelled inside a hook fails the hook: `.factoryFailed(CancellationError())`.
                    #expect(isCancellation(error), "round \(round): \(error)")
                }
            }
            let first = try await container.resolve(CNode.self, name: "0")
            let second = try await container.resolve(CNode.self, name: "1")
            #expect(first.next === second && second.next === first, "round \(round): the cycle is wired")
            first.next = nil
            second.next = nil
            watchdog.progress()
        }
    }
}
