import Arbor
import ArborTestSupport
import Foundation
import Testing

/// Runs seeded random graphs through a real container and the reference model, and reports the first disagreement
/// of each failing graph with everything needed to replay it.
struct RandomGraphRunner {
    /// The name printed with the seed, and used in the replay command.
    let suite: String
    let shape: GraphShape
    let defaultGraphs: Int
    /// With faults: also run a fault-free twin of every graph and check that each operation that succeeded with
    /// faults gave the same result, and ran the same factories, as in the twin — where the failed resolves never
    /// happened.
    let twin: Bool

    struct Statistics {
        var graphs = 0
        var services = 0
        var registrations = 0
        var resolves = 0
        var succeeded = 0
        var failures: [String: Int] = [:]
        var instances = 0
        var twinComparisons = 0

        var summary: String {
            let errors = failures.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            var text = "\(graphs) graphs (\(services) services, \(registrations) registrations), each run twice (fast "
            text += "path, and watched by a LeakTracker: the general path); per run \(resolves) resolves: "
            text += "\(succeeded) returned, \(resolves - succeeded) threw [\(errors)]; \(instances) instances built"
            if twinComparisons > 0 { text += "; \(twinComparisons) operations matched against the fault-free twin" }
            return text
        }
    }

    /// Runs the graphs: `ARBOR_GRAPH_SEED` alone if set, else `ARBOR_GRAPHS` (or `defaultGraphs`) graphs derived
    /// from `ARBOR_SEED` (or a fresh seed). Records an issue per failing graph, at most three.
    ///
    /// The graphs run on a thread of their own (minutes in a debug build), not on one of Swift's few threads for
    /// tasks, which the suites running alongside need; the issues are recorded here, in the test's task.
    func run(sourceLocation: SourceLocation = #_sourceLocation) async {
        let runner = self
        for failure in await onAThreadOfItsOwn({ runner.failures() }) {
            Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
        }
    }

    /// Runs the graphs, and returns a report of each failing graph, at most three.
    private func failures() -> [String] {
        var failures: [String] = []
        let started = Date()
        let seeds: [UInt64]
        let header: String
        if let single = TestEnvironment.singleGraphSeed {
            seeds = [single]
            header = "\(suite): replaying the graph ARBOR_GRAPH_SEED=\(TestEnvironment.hex(single))"
        } else {
            let base = TestEnvironment.baseSeed
            let fallback = TestEnvironment.runsUnderSanitizer ? defaultGraphs / 4 : defaultGraphs
            let count = TestEnvironment.count("ARBOR_GRAPHS", default: fallback)
            seeds = (0..<count).map { SplitMix64.derive(base, UInt64($0)) }
            header = "\(suite): \(count) random graphs from ARBOR_SEED=\(TestEnvironment.hex(base))"
        }
        print(header)
        var statistics = Statistics()
        for (index, seed) in seeds.enumerated() {
            let graph = GraphGenerator.make(seed: seed, shape: shape)
            if let problem = check(graph, statistics: &statistics) {
                failures.append(
                    """
                    \(header): graph \(index) failed.
                    \(problem)
                    Replay it alone: ARBOR_GRAPH_SEED=\(TestEnvironment.hex(seed)) swift test --filter \(suite)
                    \(graph.spec)
                    """)
                if failures.count == 3 { break }
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print("\(suite): \(statistics.summary), in \(String(format: "%.1f", seconds)) s")
        return failures
    }

    /// Runs one graph twice — through the engine's fast path, and watched by a leak tracker, which sends every
    /// resolve through the general path (the rules) — and compares each run with the model. Returns what went wrong,
    /// or `nil`.
    func check(_ graph: RandomGraph, statistics: inout Statistics) -> String? {
        statistics.graphs += 1
        statistics.services += graph.spec.services.count
        statistics.registrations += graph.spec.registrations.count
        statistics.instances += graph.instances.count
        for watched in [false, true] {
            if let problem = check(graph, watched: watched, statistics: &statistics) {
                return watched ? "with a LeakTracker attached (the general path): \(problem)" : problem
            }
        }
        return nil
    }

    private func check(_ graph: RandomGraph, watched: Bool, statistics: inout Statistics) -> String? {
        let spec = graph.spec
        var harness: GraphHarness? = GraphHarness(spec, faults: shape.faults, watched: watched)
        var twinHarness: GraphHarness? = twin ? GraphHarness(spec, faults: false) : nil
        var pairs = SerialPairs()
        let log = harness!.log
        let twinLog = twinHarness?.log

        for (index, (operation, step)) in zip(spec.operations, graph.steps).enumerated() {
            let callsBefore = log.factoryCallCounts
            let real = harness!.perform(operation)
            let place = "operation \(index) (\(operation))"
            if TestEnvironment.value("ARBOR_TRACE") != nil {
                print("\(place): real \(GraphComparison.describe(real)); model \(step.outcome)")
            }
            if let problem = GraphComparison.mismatch(real: real, step: step, graph: graph, log: log) {
                return "\(place): \(problem)\n  (the operation's outcome: \(GraphComparison.describe(real)))"
            }
            if case .resolve = operation, !watched {
                statistics.resolves += 1
                switch real {
                case .success: statistics.succeeded += 1
                case .failure(let error): statistics.failures["\(ReasonKind(error.reason))", default: 0] += 1
                default: break
                }
            }
            if case .failure = step.outcome {
                if !step.rolledBack {
                    return "\(place): the reference model kept state from a failed resolve (a bug in the model)"
                }
                continue
            }
            guard let twinHarness else { continue }
            if !watched { statistics.twinComparisons += 1 }
            let twinCallsBefore = twinLog!.factoryCallCounts
            let twinReal = twinHarness.perform(operation)
            let delta = zip(log.factoryCallCounts, callsBefore).map { $0 - $1 }
            let twinDelta = zip(twinLog!.factoryCallCounts, twinCallsBefore).map { $0 - $1 }
            if delta != twinDelta {
                return """
                    \(place): with faults the factories ran differently than in the fault-free twin, although every \
                    earlier failed resolve should have left no trace:
                    \(GraphComparison.differences(delta, twinDelta))
                    """
            }
            if let problem = pairs.compare(real, twinReal, log: log, twinLog: twinLog!) {
                return "\(place): differs from the fault-free twin, which never ran the failed resolves: \(problem)"
            }
        }
        // Dropping the containers and the roots frees every container and every instance.
        let containers = harness!.tearDown()
        harness = nil
        _ = twinHarness?.tearDown()
        twinHarness = nil
        if let alive = containers.firstIndex(where: { $0.object != nil }) {
            return "after the test dropped everything, container c\(alive) is still alive"
        }
        let survivors = log.liveSerials
        if !survivors.isEmpty {
            return "after the test dropped the containers and its roots, instances \(survivors.prefix(10)) are alive"
        }
        return nil
    }
}

/// Matches instances of a run with faults to those of its fault-free twin: a consistent one-to-one map of serials,
/// under which both graphs have the same shape.
struct SerialPairs {
    private var forward: [Int: Int] = [:]
    private var backward: [Int: Int] = [:]

    private mutating func pair(_ left: Int, _ right: Int) -> Bool {
        if let known = forward[left] { return known == right }
        if backward[right] != nil { return false }
        forward[left] = right
        backward[right] = left
        return true
    }

    mutating func compare(
        _ real: GraphHarness.Outcome, _ twin: GraphHarness.Outcome, log: GraphLog, twinLog: GraphLog
    ) -> String? {
        switch (real, twin) {
        case (.done, .done):
            return nil
        case (.success(let left), .success(let right)):
            return compare(left, right, log: log, twinLog: twinLog)
        default:
            return "with faults: \(GraphComparison.describe(real)); twin: \(GraphComparison.describe(twin))"
        }
    }

    private mutating func compare(_ left: PNode?, _ right: PNode?, log: GraphLog, twinLog: GraphLog) -> String? {
        var stack: [(PNode?, PNode?)] = [(left, right)]
        var seen: Set<Int> = []
        while let (left, right) = stack.popLast() {
            guard let left, let right else {
                if left == nil && right == nil { continue }
                return "one side has an instance where the other has nil"
            }
            guard pair(left.serial, right.serial) else {
                return "instance #\(left.serial) does not correspond to the twin's #\(right.serial): sharing differs"
            }
            guard seen.insert(left.serial).inserted else { continue }
            guard left.registration == right.registration, left.arguments == right.arguments,
                left.dependencies.count == right.dependencies.count,
                left.hookReferences.count == right.hookReferences.count
            else {
                return "instance #\(left.serial) (r\(left.registration)) differs from the twin's #\(right.serial) "
                    + "(r\(right.registration))"
            }
            stack += zip(left.dependencies, right.dependencies).map { ($0, $1) }
            for (leftReference, rightReference) in zip(left.hookReferences, right.hookReferences) {
                switch (leftReference, rightReference) {
                case (nil, nil):
                    continue
                case (let leftSerial?, let rightSerial?):
                    let leftNode = log.node(leftSerial)
                    let rightNode = twinLog.node(rightSerial)
                    if (leftNode == nil) != (rightNode == nil) {
                        return "hook reference #\(leftSerial) is \(leftNode == nil ? "freed" : "alive"), the twin's "
                            + "#\(rightSerial) is not"
                    }
                    if leftNode == nil {
                        guard pair(leftSerial, rightSerial) else { return "hook references differ in sharing" }
                    } else {
                        stack.append((leftNode, rightNode))
                    }
                default:
                    return "a hook resolved nil on one side only"
                }
            }
        }
        return nil
    }
}
