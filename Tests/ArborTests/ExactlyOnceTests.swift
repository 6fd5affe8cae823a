import Arbor
import ArborTestSupport
import Foundation
import Testing

// Threads entering a cycle of permanent services wired by `initCompleted` hooks from different ends, at the same
// moment. Through the hooks' resolvers, every factory runs exactly once, every resolve succeeds, and all threads
// see the same fully wired instances. Through the container's own `resolve` (a misuse), every resolve fails fast
// with `.circularDependency`, as it does on one thread.

/// One service of the cycle: node `index` of `count`, whose hook wires `next`, node `index + 1` (mod `count`).
private final class EONode: @unchecked Sendable {
    let index: Int
    var next: EONode?
    init(index: Int) { self.index = index }
}

/// How many times each node's factory ran, from any thread.
private final class EOBuilds: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int]

    init(_ count: Int) { counts = Array(repeating: 0, count: count) }

    func record(_ index: Int) { lock.withLock { counts[index] += 1 } }

    var values: [Int] { lock.withLock { counts } }
}

/// What each thread of a round got, and how long its resolve took.
private final class EOOutcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Int: Result<EONode, any Error>] = [:]
    private var durations: [Int: Double] = [:]

    func record(_ thread: Int, _ result: Result<EONode, any Error>, seconds: Double) {
        lock.withLock {
            results[thread] = result
            durations[thread] = seconds
        }
    }

    var snapshot: (results: [Int: Result<EONode, any Error>], durations: [Int: Double]) {
        lock.withLock { (results, durations) }
    }
}

/// A container with a cycle of `count` permanent nodes. Each factory builds its node alone (after a short pause
/// that widens the race); each hook resolves the next node through the hook's resolver, or — `throughContainer`,
/// a misuse — through the container's own `resolve`.
private func cycle(of count: Int, throughContainer: Bool, builds: EOBuilds) -> Container {
    let container = Container()
    for index in 0..<count {
        let registration = container.register(EONode.self, name: "\(index)") { _ in
            builds.record(index)
            usleep(50)
            return EONode(index: index)
        }
        .inObjectScope(.permanent)
        let next = "\((index + 1) % count)"
        if throughContainer {
            registration.initCompleted { [unowned container] _, node in
                node.next = try container.resolve(EONode.self, name: next)
            }
        } else {
            registration.initCompleted { r, node in node.next = try r.resolve(EONode.self, name: next) }
        }
    }
    return container
}

/// Breaks a wired cycle, so its nodes are freed.
private func unwire(_ node: EONode?) {
    var current = node
    while let node = current {
        current = node.next
        node.next = nil
    }
}

/// Runs one round: `threads` threads start together, thread `t` resolves node `t % count`. `nil` on timeout.
private func race(
    _ container: Container, nodes count: Int, threads: Int, timeout: TimeInterval
) -> (results: [Int: Result<EONode, any Error>], durations: [Int: Double])? {
    let outcomes = EOOutcomes()
    let finished = runThreads(threads, timeout: timeout) { thread in
        let start = DispatchTime.now().uptimeNanoseconds
        let result = Result { try container.resolve(EONode.self, name: "\(thread % count)") }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        outcomes.record(thread, result, seconds: seconds)
    }
    return finished ? outcomes.snapshot : nil
}

@Suite(.serialized) struct ExactlyOnceTests {
    /// (nodes in the cycle, threads): two threads from opposite ends, three threads from the three nodes of a
    /// longer cycle, and three threads on two ends.
    @Test(arguments: [(2, 2), (3, 3), (2, 3)])
    func threadsEnteringAHookWiredPermanentCycleBuildEachInstanceExactlyOnce(nodes: Int, threads: Int) {
        let rounds = 200
        let problems = ProblemLog()
        var completed = 0
        for round in 0..<rounds {
            let builds = EOBuilds(nodes)
            let container = cycle(of: nodes, throughContainer: false, builds: builds)
            guard let outcome = race(container, nodes: nodes, threads: threads, timeout: 10) else {
                problems.record("round \(round): the threads did not finish within 10 s (deadlock?)")
                break
            }
            completed += 1
            var seen: [Int: EONode] = [:]
            for thread in 0..<threads {
                switch outcome.results[thread] {
                case .success(let node)?:
                    problems.check(node.index == thread % nodes, "round \(round): thread \(thread) got a wrong node")
                    if let earlier = seen[node.index] {
                        problems.check(earlier === node, "round \(round): two threads got different node \(node.index)")
                    }
                    seen[node.index] = node
                case .failure(let error)?:
                    problems.record("round \(round): thread \(thread) threw \(error)")
                case nil:
                    problems.record("round \(round): thread \(thread) reported nothing")
                }
            }
            // Every node is wired to the one the other threads got, and to nothing else.
            for (index, node) in seen {
                let expected =
                    seen[(index + 1) % nodes] ?? (try? container.resolve(EONode.self, name: "\((index + 1) % nodes)"))
                problems.check(
                    node.next != nil && node.next === expected,
                    "round \(round): node \(index).next is not the node the others see")
            }
            problems.check(builds.values.allSatisfy { $0 == 1 }, "round \(round): factory runs \(builds.values)")
            unwire(seen.values.first)
        }
        #expect(completed == rounds, "only \(completed) of \(rounds) rounds completed")
        problems.expectNone()
    }

    /// On one thread, a hook that resolves through the container's own `resolve` closes the cycle on the same
    /// thread's stack: the resolve throws `.circularDependency`.
    @Test func oneThreadMisusingTheContainersResolveInHooksGetsACircularDependency() throws {
        let builds = EOBuilds(2)
        let container = cycle(of: 2, throughContainer: true, builds: builds)
        let outcome = onAnotherThread(timeout: 10) { Result { try container.resolve(EONode.self, name: "0") } }
        let result = try #require(outcome, "the resolve did not finish")
        let error = try #require(resolutionError { try result.get() })
        #expect(error.kind == .circularDependency)
        #expect(builds.values.allSatisfy { $0 >= 1 })
    }

    /// The same misuse from opposite ends at once: both threads fail as fast, and as clearly, as one thread does.
    @Test func threadsMisusingTheContainersResolveInHooksFailFastWithACircularDependency() {
        let rounds = 40
        // 100 ms; under a sanitizer, which slows every memory access down many times over on a shared machine, a
        // second — still a tenth of the stall this guards against.
        let limit = TestEnvironment.runsUnderSanitizer ? 1.0 : 0.1
        let problems = ProblemLog()
        var completed = 0
        for round in 0..<rounds {
            let builds = EOBuilds(2)
            let container = cycle(of: 2, throughContainer: true, builds: builds)
            // The threads are left behind if they take longer than this; the round counts as failed.
            guard let outcome = race(container, nodes: 2, threads: 2, timeout: 2) else {
                problems.record("round \(round): the threads did not finish within 2 s")
                break
            }
            completed += 1
            for thread in 0..<2 {
                switch outcome.results[thread] {
                case .success?:
                    problems.record("round \(round): thread \(thread) resolved a cycle wired through the container")
                case .failure(let error)?:
                    let kind = (error as? ResolutionError)?.kind
                    problems.check(kind == .circularDependency, "round \(round): thread \(thread) threw \(error)")
                case nil:
                    problems.record("round \(round): thread \(thread) reported nothing")
                }
                let seconds = outcome.durations[thread] ?? .infinity
                problems.check(
                    seconds <= limit,
                    "round \(round): thread \(thread) took \(Int(seconds * 1000)) ms (limit \(Int(limit * 1000)) ms)")
            }
        }
        #expect(completed == rounds, "only \(completed) of \(rounds) rounds completed")
        problems.expectNone()
    }
}
