import Arbor
import Foundation

/// What the factories and hooks of one random graph record: how often each ran, and a weak reference to every
/// instance, by serial, so the test can tell which instances are still alive.
final class GraphLog: @unchecked Sendable {
    private let lock = NSLock()
    private var factoryCalls: [Int]
    private var hookCalls: [[Int]]
    private var nodes: [WeakRef<PNode>] = []
    /// Whether the spec's faults fire. A harness without them is the fault-free twin of one with them.
    let faultsEnabled: Bool

    init(_ spec: GraphSpec, faultsEnabled: Bool) {
        factoryCalls = Array(repeating: 0, count: spec.registrations.count)
        hookCalls = spec.registrations.map { Array(repeating: 0, count: $0.hooks.count) }
        self.faultsEnabled = faultsEnabled
    }

    /// Counts a factory call and returns its number, from 1.
    func factoryCalled(_ registration: Int) -> Int {
        lock.withLock {
            factoryCalls[registration] += 1
            return factoryCalls[registration]
        }
    }

    func hookCalled(_ registration: Int, hook: Int) -> Int {
        lock.withLock {
            hookCalls[registration][hook] += 1
            return hookCalls[registration][hook]
        }
    }

    /// Makes a node with the next serial and remembers it weakly.
    func create<Node: PNode>(
        _ type: Node.Type, registration: Int, arguments: Arguments, dependencies: [PNode?]
    ) -> Node {
        lock.withLock {
            let node = Node(
                serial: nodes.count, registration: registration, arguments: arguments, dependencies: dependencies)
            nodes.append(WeakRef(node))
            return node
        }
    }

    var factoryCallCounts: [Int] { lock.withLock { factoryCalls } }
    var hookCallCounts: [[Int]] { lock.withLock { hookCalls } }
    var nextSerial: Int { lock.withLock { nodes.count } }

    /// The instance with this serial, if it is still alive.
    func node(_ serial: Int) -> PNode? {
        lock.withLock { serial < nodes.count ? nodes[serial].object : nil }
    }

    var liveSerials: [Int] {
        lock.withLock { nodes.indices.filter { nodes[$0].object != nil } }
    }
}

/// A `GraphSpec` registered in a real tree of containers, and the roots the test holds.
final class GraphHarness {
    enum Outcome {
        case success(PNode?)
        case failure(ResolutionError)
        case unexpected(any Error)
        case done
    }

    let spec: GraphSpec
    let log: GraphLog
    private(set) var containers: [Container] = []
    private(set) var held: [PNode] = []
    /// A leak tracker on the root, when the harness runs `watched`: every resolve then takes the engine's general
    /// path (the rules), never the fast path.
    private var tracker: LeakTracker?

    /// `watched` attaches a `LeakTracker` to the root container, so the same graph runs through the general path.
    init(_ spec: GraphSpec, faults: Bool, watched: Bool = false) {
        self.spec = spec
        log = GraphLog(spec, faultsEnabled: faults)
        for container in spec.containers {
            let made =
                container.parent.map { containers[$0].makeChild() } ?? Container()
            if let limit = container.depthLimit { made.maxResolutionDepth = limit }
            containers.append(made)
        }
        if watched, let root = containers.first { tracker = LeakTracker(root) }
        for registration in spec.registrations where registration.initiallyRegistered {
            register(registration)
        }
    }

    /// Runs one operation. A resolve's result is held until a `release` drops it.
    func perform(_ operation: Operation) -> Outcome {
        switch operation {
        case .resolve(let from, let edge):
            do {
                let node = try Self.resolve(edge, services: spec.services, with: containers[from])
                if let node { held.append(node) }
                return .success(node)
            } catch let error as ResolutionError {
                return .failure(error)
            } catch {
                return .unexpected(error)
            }
        case .release(let stride, let offset):
            held = held.enumerated().filter { $0.offset % stride != offset }.map(\.element)
            return .done
        case .reset(let container, let scope):
            containers[container].resetObjectScope(scope.objectScope)
            return .done
        case .register(let id):
            register(spec.registrations[id])
            return .done
        case .unregister(let id):
            let registration = spec.registrations[id]
            let container = containers[registration.container]
            let service = spec.services[registration.service]
            func unregister<Shape: NodeShape>(_: Shape.Type) {
                container.unregister(Shape.Service.self, name: service.name)
            }
            unregister(service.kind.shape)
            return .done
        case .close(let container):
            containers[container].close()
            return .done
        }
    }

    /// Drops the held roots and the containers, for the end of a graph; returns weak references to the containers.
    func tearDown() -> [WeakRef<Container>] {
        let references = containers.map(WeakRef.init)
        held = []
        containers = []
        tracker = nil
        return references
    }

    // MARK: Registering

    private func register(_ registration: RegistrationSpec) {
        register(spec.services[registration.service].kind.shape, registration)
    }

    private func register<Shape: NodeShape>(_: Shape.Type, _ registration: RegistrationSpec) {
        typealias Node = Shape.Service
        let container = containers[registration.container]
        let service = spec.services[registration.service]
        let services = spec.services
        let log = self.log
        let faults = log.faultsEnabled
        let make: @Sendable (any Resolver, Arguments) throws -> Node = { resolver, arguments in
            let call = log.factoryCalled(registration.id)
            var dependencies: [PNode?] = []
            for (step, edge) in registration.dependencies.enumerated() {
                try Self.inject(registration.fault, faults, call: call, step: step, registration.id, hook: nil)
                dependencies.append(try Self.resolve(edge, services: services, with: resolver))
            }
            try Self.inject(
                registration.fault, faults, call: call, step: registration.dependencies.count, registration.id,
                hook: nil)
            return Shape.wrap(
                log.create(
                    Shape.Node.self, registration: registration.id, arguments: arguments, dependencies: dependencies))
        }
        let handle: Registration<Node>
        switch service.shape {
        case .none:
            handle = container.register(Node.self, name: service.name) { resolver in try make(resolver, .none) }
        case .int:
            handle = container.register(Node.self, name: service.name) { (resolver, value: Int) in
                try make(resolver, .int(value))
            }
        case .stringInt:
            handle = container.register(Node.self, name: service.name) { (resolver, text: String, value: Int) in
                try make(resolver, .stringInt(text, value))
            }
        }
        handle.inObjectScope(registration.scope.objectScope)
        for (index, hook) in registration.hooks.enumerated() {
            handle.initCompleted { resolver, service in
                let node = Shape.node(of: service)
                let call = log.hookCalled(registration.id, hook: index)
                for (step, edge) in hook.edges.enumerated() {
                    try Self.inject(hook.fault, faults, call: call, step: step, registration.id, hook: index)
                    let resolved = try Self.resolve(edge, services: services, with: resolver)
                    node.hookReferences.append(resolved?.serial)
                }
                try Self.inject(hook.fault, faults, call: call, step: hook.edges.count, registration.id, hook: index)
            }
        }
        if registration.hasForward {
            handle.implements(PNode.self, name: service.forwardName)
        }
    }

    private static func inject(
        _ fault: Fault?, _ enabled: Bool, call: Int, step: Int, _ registration: Int, hook: Int?
    ) throws {
        guard enabled, let fault, fault.call == call, fault.step == step else { return }
        throw InjectedFault(registration: registration, hook: hook, call: call, step: step)
    }

    // MARK: Resolving an edge

    static func resolve(_ edge: Edge, services: [ServiceSpec], with resolver: any Resolver) throws -> PNode? {
        let service = services[edge.service]
        return try resolve(service.kind.shape, service, edge, resolver)
    }

    private static func resolve<Shape: NodeShape>(
        _: Shape.Type, _ service: ServiceSpec, _ edge: Edge, _ resolver: any Resolver
    ) throws -> PNode? {
        switch edge.via {
        case .direct:
            return Shape.node(of: try resolve(Shape.Service.self, name: service.name, edge.arguments, resolver))
        case .optional:
            return try resolve(Shape.Service?.self, name: service.name, edge.arguments, resolver).map(Shape.node(of:))
        case .forward:
            return try resolve(PNode.self, name: service.forwardName, edge.arguments, resolver)
        }
    }

    private static func resolve<Service>(
        _: Service.Type, name: String?, _ arguments: Arguments, _ resolver: any Resolver
    ) throws -> Service {
        switch arguments {
        case .none: try resolver.resolve(Service.self, name: name)
        case .int(let value): try resolver.resolve(Service.self, name: name, arguments: value)
        case .stringInt(let text, let value): try resolver.resolve(Service.self, name: name, arguments: text, value)
        }
    }
}

// MARK: - Comparing with the model

enum GraphComparison {
    /// What is wrong with the real outcome of one operation, given the model's; `nil` when they agree.
    ///
    /// Checks the outcome (the returned instance's serial, or the error's reason, key and path), then every instance
    /// reachable from the result (registration, arguments, dependencies and hook references, by serial — so two
    /// places share an instance in the real graph exactly when they do in the model), the factory and hook call
    /// counts, and which instances are alive.
    static func mismatch(
        real: GraphHarness.Outcome, step: ReferenceModel.Step, graph: RandomGraph, log: GraphLog
    ) -> String? {
        let expected = step.outcome
        switch (real, expected) {
        case (.done, .done):
            break
        case (.success(let node), .success(let serial)):
            if node?.serial != serial {
                return "returned \(describe(node?.serial)), the model expects \(describe(serial))"
            }
            if let node, let problem = compareTree(from: node, instances: graph.instances) { return problem }
        case (.failure(let error), .failure(let failure)):
            if let problem = compare(error, failure) { return problem }
        case (.unexpected(let error), _):
            return "threw a non-ResolutionError: \(error); the model expects \(expected)"
        default:
            return "got \(describe(real)), the model expects \(expected)"
        }
        let factoryCalls = log.factoryCallCounts
        if factoryCalls != step.factoryCalls {
            return "factory call counts differ:\n\(differences(factoryCalls, step.factoryCalls))"
        }
        let hookCalls = log.hookCallCounts
        if hookCalls != step.hookCalls {
            return "hook call counts differ: real \(hookCalls), model \(step.hookCalls)"
        }
        if log.nextSerial != step.nextSerial {
            return "\(log.nextSerial) instances were created, the model expects \(step.nextSerial)"
        }
        for serial in step.checkAlive {
            let isAlive = log.node(serial) != nil
            if isAlive != step.alive[serial] {
                let registration = graph.instances[serial].registration
                return "instance #\(serial) (r\(registration), .\(graph.spec.registrations[registration].scope)) is "
                    + "\(isAlive ? "alive" : "freed"); the model expects it \(step.alive[serial] ? "alive" : "freed")"
            }
        }
        return nil
    }

    static func compare(_ error: ResolutionError, _ failure: ReferenceModel.Failure) -> String? {
        let reasonMatches: Bool
        switch (error.reason, failure.reason) {
        case (.notRegistered, .notRegistered), (.circularDependency, .circularDependency),
            (.depthLimitExceeded, .depthLimitExceeded), (.containerClosed, .containerClosed):
            reasonMatches = true
        case (.factoryFailed(let underlying), .factoryFailed(let fault)):
            reasonMatches = (underlying as? InjectedFault) == fault
        default:
            reasonMatches = false
        }
        if !reasonMatches || error.key != failure.key || error.path != failure.path {
            return "threw \(error.reason) for \(error.key), path \(describe(error.path)); "
                + "the model expects \(failure)\nfull error: \(error)"
        }
        return nil
    }

    private static func compareTree(from root: PNode, instances: [ReferenceModel.Instance]) -> String? {
        var stack = [root]
        var seen: Set<Int> = []
        while let node = stack.popLast() {
            guard seen.insert(node.serial).inserted else { continue }
            guard node.serial < instances.count else {
                return "instance #\(node.serial) is unknown to the model"
            }
            let expected = instances[node.serial]
            let dependencies = node.dependencies.map { $0?.serial }
            if node.registration != expected.registration || node.arguments != expected.arguments
                || dependencies != expected.dependencies || node.hookReferences != expected.hookReferences
            {
                return """
                    instance #\(node.serial) differs:
                      real:  r\(node.registration)\(node.arguments) deps \(dependencies.map(describe)) \
                    hooks \(node.hookReferences.map(describe))
                      model: r\(expected.registration)\(expected.arguments) deps \(expected.dependencies.map(describe)) \
                    hooks \(expected.hookReferences.map(describe))
                    """
            }
            stack += node.dependencies.compactMap { $0 }
        }
        return nil
    }

    static func describe(_ path: [ServiceKey]) -> String {
        path.map(\.description).joined(separator: " → ")
    }

    static func describe(_ serial: Int?) -> String {
        serial.map { "#\($0)" } ?? "nil"
    }

    static func describe(_ outcome: GraphHarness.Outcome) -> String {
        switch outcome {
        case .success(let node): "success \(describe(node?.serial))"
        case .failure(let error): "failure \(error.reason) for \(error.key), path \(describe(error.path))"
        case .unexpected(let error): "unexpected error \(error)"
        case .done: "done"
        }
    }

    static func differences(_ real: [Int], _ model: [Int]) -> String {
        zip(real, model).enumerated().filter { $0.element.0 != $0.element.1 }.prefix(8)
            .map { "  r\($0.offset): real \($0.element.0), model \($0.element.1)" }.joined(separator: "\n")
    }
}
