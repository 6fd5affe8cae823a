import Arbor
import ArborTestSupport
import Testing

// Property-based tests: seeded random dependency graphs (10–200 services in three types, with names and runtime
// arguments, random lifetimes, overrides spread over a random container tree of up to four levels, optional and
// forwarded edges, `initCompleted` hooks with back edges, depth limits down to 0 and below), each run through a real
// container and through `ReferenceModel`, which walks the rules of API.md §4–5 and predicts every instance, every
// factory and hook call, every error with its path, and which instances are alive. See `Support/`.
//
// The seed is printed; a failure prints the graph and the command that replays it:
//   ARBOR_SEED=0x…         run the same graphs again (ARBOR_GRAPHS=n sets how many; 1,000 by default)
//   ARBOR_GRAPH_SEED=0x…   replay one failing graph

@Suite struct PropertyBasedTests {
    @Test func randomGraphsAgreeWithTheReferenceModel() async {
        await RandomGraphRunner(suite: "PropertyBasedTests", shape: GraphShape(), defaultGraphs: 1_000, twin: false)
            .run()
    }

    @Test func graphInstancesAreSharedPerRegistrationAndContainer() throws {
        // The rule the model must get right: a graph instance is shared per (registration, container the look-up
        // starts in). G is graph-scoped; P is permanent and depends on G; R depends on P and G. From the root, P's
        // factory and R share one G. From a child, P is still built in the root (its owner), so P's G is the root's
        // G of this resolve, and R's G is the child's: two instances of one registration in one resolve.
        var spec = GraphSpec(seed: 0)
        spec.containers = [
            ContainerSpec(index: 0, parent: nil, level: 0), ContainerSpec(index: 1, parent: 0, level: 1),
        ]
        spec.services = (0..<3).map { ServiceSpec(index: $0, kind: .a, name: "s\($0)", shape: .none) }
        let edge = { (service: Int) in Edge(service: service, arguments: .none, via: .direct) }
        spec.registrations = [
            RegistrationSpec(
                id: 0, service: 0, container: 0, scope: .graph, dependencies: [], hooks: [], fault: nil,
                hasForward: false),
            RegistrationSpec(
                id: 1, service: 1, container: 0, scope: .permanent, dependencies: [edge(0)], hooks: [], fault: nil,
                hasForward: false),
            RegistrationSpec(
                id: 2, service: 2, container: 0, scope: .graph, dependencies: [edge(1), edge(0)], hooks: [],
                fault: nil, hasForward: false),
        ]
        spec.registrationIn = [[0: 0, 1: 1, 2: 2], [:]]
        spec.operations = [.resolve(from: 1, edge: edge(2)), .reset(container: 0, scope: .permanent)]
        spec.operations += [.resolve(from: 0, edge: edge(2))]

        let (steps, instances) = try #require(ReferenceModel.run(spec, workPerResolve: 100))
        // The model: from the child, G #0 (root context, in P's factory), P #1, G #2 (child context), R #3.
        guard case .success(let fromChild) = steps[0].outcome, case .success(let fromRoot) = steps[2].outcome else {
            Issue.record("the model failed a resolve")
            return
        }
        #expect(fromChild == 3 && instances[3].dependencies == [1, 2] && instances[1].dependencies == [0])
        // From the root, after the reset: one G for P and R.
        #expect(fromRoot == 6 && instances[6].dependencies == [5, 4] && instances[5].dependencies == [4])

        // Arbor agrees.
        var statistics = RandomGraphRunner.Statistics()
        let runner = RandomGraphRunner(suite: "PropertyBasedTests", shape: GraphShape(), defaultGraphs: 1, twin: false)
        #expect(
            runner.check(RandomGraph(spec: spec, steps: steps, instances: instances), statistics: &statistics) == nil)
    }

    @Test func theSameSeedDrawsTheSameGraph() {
        let seed: UInt64 = 0xA5B0_12C3
        #expect(GraphGenerator.make(seed: seed).spec.description == GraphGenerator.make(seed: seed).spec.description)
        #expect(
            GraphGenerator.make(seed: seed).spec.description != GraphGenerator.make(seed: seed + 1).spec.description)
    }

    @Test func graphsCoverWhatTheyClaimTo() {
        // Over a fixed batch, the generator produces every feature the model is meant to check.
        var scopes: Set<ModelScope> = []
        var vias: Set<EdgeVia> = []
        var overrides = 0
        var backEdges = 0
        var deepTrees = 0
        var lowLimits = 0
        var sizes: [Int] = []
        for index in 0..<100 {
            let spec = GraphGenerator.make(seed: SplitMix64.derive(42, UInt64(index))).spec
            sizes.append(spec.services.count)
            for registration in spec.registrations {
                scopes.insert(registration.scope)
                for edge in registration.dependencies { vias.insert(edge.via) }
                for hook in registration.hooks where hook.edges.contains(where: { $0.service > registration.service }) {
                    backEdges += 1
                }
            }
            overrides += spec.services.filter { $0.registrations.count > 1 }.count
            if spec.containers.contains(where: { $0.level == 3 }) { deepTrees += 1 }
            if spec.containers.contains(where: { ($0.depthLimit ?? 1) <= 0 }) { lowLimits += 1 }
        }
        #expect(scopes == Set(ModelScope.allCases))
        #expect(vias == [.direct, .optional, .forward])
        #expect(overrides > 100 && backEdges > 100 && deepTrees > 5 && lowLimits > 1)
        #expect(sizes.min()! < 30 && sizes.max()! > 180)
    }
}
