import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// The edges at once, for a few seconds (CI runs it under ThreadSanitizer too): tasks that wait for a build are
// cancelled, request children are closed while their instances are built, and the main actor resolves — synchronously
// and with `await` — what tasks are building. Each round checks that every instance a child kept was built once and
// released once (`onRelease`), that a resolve begun after `close()` returned throws, and that nothing hangs.

private final class EUnit: @unchecked Sendable {}
private final class ECache: @unchecked Sendable {}

@MainActor
private final class EView {}

/// How the resolves of all rounds ended, to show that the rounds reached every edge.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func record<Value>(_ result: Result<Value, any Error>) {
        let name: String
        switch result {
        case .success: name = "resolved"
        case .failure(let error as ResolutionError): name = "\(error.kind)"
        case .failure(let error) where error is CancellationError: name = "cancelled"
        case .failure(let error): name = "\(type(of: error))"
        }
        lock.withLock { counts[name, default: 0] += 1 }
    }

    var all: [String: Int] { lock.withLock { counts } }
}

/// Factory runs and releases, per registration, in one round.
private final class EdgeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var builds: [String: Int] = [:]
    private var releases: [String: Int] = [:]

    func built(_ name: String) { lock.withLock { builds[name, default: 0] += 1 } }
    func released(_ name: String) { lock.withLock { releases[name, default: 0] += 1 } }
    var counts: (builds: [String: Int], releases: [String: Int]) { lock.withLock { (builds, releases) } }
}

/// The storage that keeps the unit's instance in `child`.
private func unitStorage(in child: Container, of root: Container) throws -> InstanceStorage {
    let entry = try #require(root.entries.first { $0.key == ServiceKey(EUnit.self, name: nil) })
    return child.perContainerStorage(for: entry)
}

@Suite struct EdgeStressTests {
    @MainActor
    @Test func cancelledWaitersClosedChildrenAndTheMainActorAtOnce() async throws {
        let watchdog = Watchdog("the edge stress test", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        var generator = SplitMix64(seed: TestEnvironment.baseSeed)
        let rounds = runsUnderSanitizer ? 200 : 1_000
        let root = Container()
        let outcomes = Outcomes()
        let mainActorOutcomes = Outcomes()
        for round in 0..<rounds {
            let log = EdgeLog()
            let sleep = UInt64(generator.int(in: 0...1_000))
            // Every tenth round holds the unit's build at a gate until a waiting task was cancelled, the main actor
            // was refused a wait and the child was closed, so each edge is reached however the machine schedules the
            // tasks; the others leave it to timing.
            let gate = round % 10 == 0 ? Gate() : nil
            root.register(EUnit.self) { _ async in
                log.built("unit")
                if let gate {
                    await gate.passAsync()
                } else {
                    try? await Task.sleep(nanoseconds: sleep * 1_000)
                }
                return EUnit()
            }
            .inObjectScope(.perContainer)
            .onRelease { _ in log.released("unit") }
            let child = root.makeChild()
            child.register(ECache.self) { _ in
                log.built("cache")
                usleep(UInt32(sleep / 2))
                return ECache()
            }
            .inObjectScope(.permanent)
            .onRelease { _ in log.released("cache") }
            child.register(EView.self) { @MainActor _ in
                log.built("view")
                return EView()
            }
            .inObjectScope(.permanent)
            .onRelease { _ in log.released("view") }

            // Tasks that resolve each service, some of them cancelled while they wait; a thread that resolves the
            // synchronous one; a task that prefetches the main-actor one. In a gated round a task starts the unit's
            // build first, so that the four tasks that resolve it all wait.
            var tasks: [Task<Void, Never>] = []
            if let gate {
                tasks.append(
                    Task.detached {
                        do {
                            _ = try await child.resolve(EUnit.self)
                            outcomes.record(Result<Void, any Error>.success(()))
                        } catch {
                            outcomes.record(Result<Void, any Error>.failure(error))
                        }
                    })
                #expect(await poll { gate.hasArrivals }, "round \(round): the unit's build started")
            }
            for index in 0..<12 {
                tasks.append(
                    Task.detached {
                        do {
                            switch index % 3 {
                            case 0: _ = try await child.resolve(EUnit.self)
                            case 1: _ = try await child.resolve(ECache.self)
                            default: _ = try await child.resolve(EView.self)
                            }
                            outcomes.record(Result<Void, any Error>.success(()))
                        } catch {
                            outcomes.record(Result<Void, any Error>.failure(error))
                        }
                    })
            }
            let thread = Thread { _ = try? child.resolve(ECache.self) }
            thread.start()
            let pause = UInt64(generator.int(in: 0...200))
            if gate != nil {
                let storage = try unitStorage(in: child, of: root)
                let waitingForUnit = { CreationCoordinator.shared.waitingCounts(for: storage).suspended }
                // Tasks 0, 3, 6 and 9 wait for the unit; 9 is cancelled, and stops waiting before the child closes.
                #expect(await poll { waitingForUnit() == 4 }, "round \(round): \(waitingForUnit()) tasks wait")
                for (index, task) in tasks.dropFirst().enumerated() where index % 4 == 1 { task.cancel() }
                #expect(await poll { waitingForUnit() == 3 }, "round \(round): the cancelled task stopped waiting")
            } else {
                try? await Task.sleep(nanoseconds: pause * 1_000)
                for (index, task) in tasks.enumerated() where index % 4 == 1 { task.cancel() }
            }

            // The main actor resolves what the tasks are building: synchronously it may throw, never wait for ever.
            mainActorOutcomes.record(Result { try resolveSynchronously(EView.self, from: child) })
            mainActorOutcomes.record(Result { try resolveSynchronously(EUnit.self, from: child) })
            do {
                _ = try await child.resolve(EView.self)
            } catch {
                mainActorOutcomes.record(Result<Void, any Error>.failure(error))
            }

            if generator.chance(0.5) {
                child.close()
            } else {
                await child.closeAndWait()
            }
            let closed = resolutionError { try resolveSynchronously(ECache.self, from: child) }
            #expect(closed?.kind == .containerClosed, "round \(round): a resolve after close throws")
            gate?.open()
            for task in tasks { await task.value }
            while thread.isExecuting { try? await Task.sleep(nanoseconds: 100_000) }
            // `close()` starts async release hooks in a task; closeAndWait awaited them. There are none here.
            let counts = log.counts
            for name in ["unit", "cache", "view"] {
                let built = counts.builds[name, default: 0]
                #expect(built <= 1, "round \(round): \(name) was built \(built) times in one child")
                #expect(
                    counts.releases[name, default: 0] == built,
                    "round \(round): \(name) built \(built), released \(counts.releases[name, default: 0])")
            }
            watchdog.progress()
        }
        // The rounds reached the edges: waits cancelled, children closed under resolves, the main actor refused a
        // wait for a task's build.
        let tasks = outcomes.all
        let mainActor = mainActorOutcomes.all
        print(
            "EdgeStressTests: tasks \(tasks.sorted { $0.key < $1.key }), main actor \(mainActor.sorted { $0.key < $1.key })"
        )
        #expect(tasks["resolved", default: 0] > 0)
        #expect(tasks["cancelled", default: 0] > 0, "\(tasks)")
        #expect(tasks["containerClosed", default: 0] > 0, "\(tasks)")
        #expect(mainActor["asyncRequired", default: 0] > 0, "\(mainActor)")
        #expect(
            Set(tasks.keys).isSubset(of: ["resolved", "cancelled", "containerClosed", "factoryFailed"]), "\(tasks)")
    }
}
