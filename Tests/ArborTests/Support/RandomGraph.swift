import Arbor
import ArborTestSupport

// A random dependency graph, as plain data: the containers of a tree, the services, their registrations (with
// overrides in descendants), and the operations a test performs on it. `ReferenceModel` predicts what Arbor must do
// with it; `GraphHarness` registers it in real containers. Both read only this description.

/// The four lifetimes, as the model knows them.
enum ModelScope: String, Sendable, CaseIterable {
    case transient, graph, weak, permanent

    var objectScope: ObjectScope {
        switch self {
        case .transient: .transient
        case .graph: .graph
        case .weak: .weak
        case .permanent: .permanent
        }
    }
}

/// The type a service is registered as: three classes, so keys differ by type as well as by name, and three other
/// shapes of service type — a protocol that is not class-bound, `Any`, and a struct — whose instances hold a node too.
/// A class behind an existential must behave as the class itself; a struct is a value, so `.weak` is transient for it.
enum NodeKind: String, Sendable, CaseIterable {
    case a = "PA"
    case b = "PB"
    case c = "PC"
    case d = "any PShape"
    case e = "Any"
    case f = "PValue"

    /// How a service of this kind is registered and resolved.
    var shape: any NodeShape.Type {
        switch self {
        case .a: ClassNodes<PA>.self
        case .b: ClassNodes<PB>.self
        case .c: ClassNodes<PC>.self
        case .d: ProtocolNodes.self
        case .e: AnyNodes.self
        case .f: ValueNodes.self
        }
    }

    /// Whether the registered instance is a value, not a class instance: weak scope keeps nothing of it, and it is no
    /// node that a forward to `PNode` could cast.
    var isValue: Bool { self == .f }
}

/// How one kind of node is registered: the service type, the node class its factory makes, and the conversions.
protocol NodeShape: Sendable {
    associatedtype Service
    associatedtype Node: PNode
    static func wrap(_ node: Node) -> Service
    static func node(of service: Service) -> PNode
}

/// A node class registered as itself.
enum ClassNodes<Node: PNode>: NodeShape {
    static func wrap(_ node: Node) -> Node { node }
    static func node(of service: Node) -> PNode { service }
}

/// A protocol that is not class-bound, as most registrations use.
protocol PShape {
    var node: PNode { get }
}

enum ProtocolNodes: NodeShape {
    static func wrap(_ node: PD) -> any PShape { node }
    static func node(of service: any PShape) -> PNode { service.node }
}

enum AnyNodes: NodeShape {
    static func wrap(_ node: PE) -> Any { node }
    static func node(of service: Any) -> PNode { service as! PNode }
}

/// A value that holds a node.
struct PValue: @unchecked Sendable {
    let node: PNode
}

enum ValueNodes: NodeShape {
    static func wrap(_ node: PF) -> PValue { PValue(node: node) }
    static func node(of service: PValue) -> PNode { service.node }
}

/// The runtime-argument types of a service: part of its key.
enum ArgumentShape: String, Sendable, CaseIterable {
    case none = ""
    case int = "Int"
    case stringInt = "String, Int"
}

/// The runtime arguments one resolve passes.
enum Arguments: Hashable, Sendable, CustomStringConvertible {
    case none
    case int(Int)
    case stringInt(String, Int)

    var description: String {
        switch self {
        case .none: ""
        case .int(let value): "(\(value))"
        case .stringInt(let text, let value): "(\"\(text)\", \(value))"
        }
    }
}

/// How a factory, a hook or a test asks for a service.
enum EdgeVia: String, Sendable {
    /// `resolve(PA.self, name: …)`.
    case direct
    /// `resolve(PA?.self, name: …)`: `nil` where the service has no registration.
    case optional
    /// `resolve(PNode.self, name: "f<index>")`: through the `.implements` forward of the service's first registration.
    case forward
}

/// One resolve of service `service`.
struct Edge: Sendable, CustomStringConvertible {
    var service: Int
    var arguments: Arguments
    var via: EdgeVia

    var description: String {
        switch via {
        case .direct: "s\(service)\(arguments)"
        case .optional: "s\(service)?\(arguments)"
        case .forward: "f\(service)\(arguments)"
        }
    }
}

/// Where an injected failure strikes: on the `call`-th call of a factory (or hook) of one registration, after it has
/// resolved `step` of its dependencies.
struct Fault: Sendable, Hashable, CustomStringConvertible {
    var call: Int
    var step: Int

    var description: String { "throws on call \(call) after \(step) resolve(s)" }
}

struct HookSpec: Sendable {
    var edges: [Edge]
    var fault: Fault?
}

struct RegistrationSpec: Sendable {
    var id: Int
    var service: Int
    var container: Int
    var scope: ModelScope
    var dependencies: [Edge]
    var hooks: [HookSpec]
    var fault: Fault?
    /// Whether this registration also answers for `PNode(name: "f<service>")` (`.implements`).
    var hasForward: Bool
    /// Registered when the graph is set up; otherwise only by a `.register` operation.
    var initiallyRegistered = true
}

struct ServiceSpec: Sendable {
    let index: Int
    let kind: NodeKind
    /// `s<index>`, or `nil` for an unnamed registration (unique per type and argument types).
    let name: String?
    let shape: ArgumentShape
    /// The registrations of this service, the first one nearest the root.
    var registrations: [Int] = []
    /// The registration that carries the forward, if the service has one.
    var forwardRegistration: Int?

    /// The keys a resolve of this service can name, made once: making a key with arguments looks up tuple metadata.
    let key: ServiceKey
    let optionalKey: ServiceKey
    let forwardKey: ServiceKey

    var forwardName: String { "f\(index)" }

    init(index: Int, kind: NodeKind, name: String?, shape: ArgumentShape) {
        self.index = index
        self.kind = kind
        self.name = name
        self.shape = shape
        func keys<Shape: NodeShape>(_: Shape.Type) -> (ServiceKey, ServiceKey) {
            (
                Self.key(Shape.Service.self, name: name, shape: shape),
                Self.key(Shape.Service?.self, name: name, shape: shape)
            )
        }
        (key, optionalKey) = keys(kind.shape)
        forwardKey = Self.key(PNode.self, name: "f\(index)", shape: shape)
    }

    static func key<Service>(_ type: Service.Type, name: String?, shape: ArgumentShape) -> ServiceKey {
        switch shape {
        case .none: ServiceKey(type, name: name)
        case .int: ServiceKey(type, name: name, arguments: Int.self)
        case .stringInt: ServiceKey(type, name: name, arguments: String.self, Int.self)
        }
    }
}

struct ContainerSpec: Sendable {
    var index: Int
    var parent: Int?
    /// 0 for the root.
    var level: Int
    /// `maxResolutionDepth`, when the graph sets one (possibly 0 or negative); `nil` keeps the default.
    var depthLimit: Int?

    /// The limit Arbor applies: negative values count as 0.
    var effectiveDepthLimit: Int { max(0, depthLimit ?? 200) }
}

enum Operation: Sendable, CustomStringConvertible {
    /// A top-level resolve, from the container `from`.
    case resolve(from: Int, edge: Edge)
    /// The test drops the roots it holds at positions `p` with `p % stride == offset`.
    case release(stride: Int, offset: Int)
    /// `containers[container].resetObjectScope(scope)`.
    case reset(container: Int, scope: ModelScope)
    /// Registers (again) the registration with this id: replaces it if it is there.
    case register(Int)
    /// `unregister(type, name:)` of the registration's service, in the registration's container: this removes every
    /// argument shape of that type and name there.
    case unregister(Int)
    /// `containers[container].close()`: it and its descendants resolve nothing any more.
    case close(Int)

    var description: String {
        switch self {
        case .resolve(let from, let edge): "resolve \(edge) from c\(from)"
        case .release(let stride, let offset): "release held roots at positions p % \(stride) == \(offset)"
        case .reset(let container, let scope): "c\(container).resetObjectScope(.\(scope))"
        case .register(let registration): "register r\(registration) (again)"
        case .unregister(let registration): "unregister the service of r\(registration) in its container"
        case .close(let container): "c\(container).close()"
        }
    }
}

/// A whole random graph and the operations to run on it.
struct GraphSpec: Sendable, CustomStringConvertible {
    let seed: UInt64
    var containers: [ContainerSpec] = []
    var services: [ServiceSpec] = []
    var registrations: [RegistrationSpec] = []
    var operations: [Operation] = []
    /// `registrationIn[container][service]`: the registration that container holds for that service, if any.
    var registrationIn: [[Int: Int]] = []

    /// The nearest registration of `service`, looking from `container` up to the root, among those `present`.
    func lookup(_ service: Int, from container: Int, present: [Bool]? = nil) -> Int? {
        var current: Int? = container
        while let index = current {
            if let registration = registrationIn[index][service], present?[registration] ?? true {
                return registration
            }
            current = containers[index].parent
        }
        return nil
    }

    /// The container holding the forward of `service`, if it is visible from `container`.
    func lookupForward(_ service: Int, from container: Int, present: [Bool]) -> Int? {
        guard let registration = services[service].forwardRegistration, present[registration] else { return nil }
        let holder = registrations[registration].container
        var current: Int? = container
        while let index = current {
            if index == holder { return holder }
            current = containers[index].parent
        }
        return nil
    }

    func isAncestor(_ ancestor: Int, of container: Int) -> Bool {
        var current = containers[container].parent
        while let index = current {
            if index == ancestor { return true }
            current = containers[index].parent
        }
        return false
    }

    var description: String {
        var lines: [String] = []
        lines.append(
            "graph \(TestEnvironment.hex(seed)): \(containers.count) containers, \(services.count) services, "
                + "\(registrations.count) registrations, \(operations.count) operations")
        for container in containers {
            var line = "  c\(container.index)"
            if let parent = container.parent { line += " child of c\(parent)" } else { line += " root" }
            if let limit = container.depthLimit { line += ", maxResolutionDepth = \(limit)" }
            lines.append(line)
        }
        for registration in registrations {
            let service = services[registration.service]
            var line = "  r\(registration.id): s\(service.index) = \(service.key) in c\(registration.container)"
            line += ", .\(registration.scope)"
            if !registration.initiallyRegistered { line += ", not registered at first" }
            if registration.hasForward { line += ", implements \(service.forwardKey)" }
            line += ", deps [\(registration.dependencies.map(\.description).joined(separator: ", "))]"
            for (index, hook) in registration.hooks.enumerated() {
                line += ", hook \(index) [\(hook.edges.map(\.description).joined(separator: ", "))]"
                if let fault = hook.fault { line += " \(fault)" }
            }
            if let fault = registration.fault { line += ", factory \(fault)" }
            lines.append(line)
        }
        for (index, operation) in operations.enumerated() {
            lines.append("  op \(index): \(operation)")
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: - Generating

/// Knobs of the generator; the property suite and the fault-injection suite differ only in `faults`.
struct GraphShape: Sendable {
    var services: ClosedRange<Int> = 10...200
    var containers: ClosedRange<Int> = 1...8
    var operations: ClosedRange<Int> = 4...14
    var faults = false
    /// A graph whose model run needs more factory and hook calls than this for one resolve is redrawn (transient
    /// diamonds grow exponentially).
    var workPerResolve = 3_000
}

/// A graph with what the reference model expects of it.
struct RandomGraph {
    let spec: GraphSpec
    /// One per operation.
    let steps: [ReferenceModel.Step]
    /// Every instance the model expects the operations to build, by serial.
    let instances: [ReferenceModel.Instance]
}

enum GraphGenerator {
    /// A graph for `seed`, with the model's expectations. Deterministic: the same seed and shape give the same graph.
    static func make(seed: UInt64, shape: GraphShape = GraphShape()) -> RandomGraph {
        var attempt: UInt64 = 0
        while true {
            var spec = draw(SplitMix64(seed: SplitMix64.derive(seed, attempt)), shape: shape)
            spec = GraphSpec(
                seed: seed, containers: spec.containers, services: spec.services,
                registrations: spec.registrations, operations: spec.operations, registrationIn: spec.registrationIn)
            if let (steps, instances) = ReferenceModel.run(spec, workPerResolve: shape.workPerResolve) {
                return RandomGraph(spec: spec, steps: steps, instances: instances)
            }
            attempt += 1
        }
    }

    private static func draw(_ generator: SplitMix64, shape: GraphShape) -> GraphSpec {
        var rng = generator
        var spec = GraphSpec(seed: 0)

        // The tree: at most four levels (root, child, grandchild, great-grandchild).
        let containerCount = rng.int(in: shape.containers)
        spec.containers.append(ContainerSpec(index: 0, parent: nil, level: 0, depthLimit: nil))
        for index in 1..<max(1, containerCount) {
            let parent = rng.pick(spec.containers.filter { $0.level < 3 })
            spec.containers.append(ContainerSpec(index: index, parent: parent.index, level: parent.level + 1))
        }
        for index in spec.containers.indices where rng.chance(0.12) {
            spec.containers[index].depthLimit = rng.int(in: -2...12)
        }
        spec.registrationIn = Array(repeating: [:], count: spec.containers.count)

        // The services: distinct keys, by name, type and argument types.
        let serviceCount = rng.int(in: shape.services)
        var unnamedTaken: Set<String> = []
        for index in 0..<serviceCount {
            let kind = rng.pick(NodeKind.allCases)
            let argumentShape = rng.weighted([(ArgumentShape.none, 70), (.int, 15), (.stringInt, 15)])
            var name: String? = "s\(index)"
            let unnamedSlot = "\(kind)\(argumentShape)"
            if rng.chance(0.1), !unnamedTaken.contains(unnamedSlot) {
                unnamedTaken.insert(unnamedSlot)
                name = nil
            }
            spec.services.append(ServiceSpec(index: index, kind: kind, name: name, shape: argumentShape))
        }

        // Registrations: mostly in the root, some only in a subtree; a quarter overridden deeper down.
        for index in 0..<serviceCount {
            let home = rng.chance(0.96) ? 0 : rng.int(in: 0..<spec.containers.count)
            var places = [home]
            if rng.chance(0.25) {
                var below = spec.containers.indices.filter { spec.isAncestor(home, of: $0) }
                rng.shuffle(&below)
                places += below.prefix(rng.int(in: 1...2))
            }
            for (position, container) in places.enumerated() {
                let id = spec.registrations.count
                var registration = RegistrationSpec(
                    id: id, service: index, container: container,
                    scope: rng.weighted([(.transient, 20), (.graph, 35), (.weak, 20), (.permanent, 25)]),
                    dependencies: [], hooks: [], fault: nil, hasForward: false)
                let dependencyCount = min(index, rng.weighted([(0, 20), (1, 30), (2, 25), (3, 15), (4, 10)]))
                var chosen: Set<Int> = []
                var attempts = 0
                while chosen.count < dependencyCount, attempts < 20 {
                    attempts += 1
                    let target =
                        rng.chance(0.5) ? max(0, index - 1 - rng.int(in: 0...3)) : rng.int(in: 0..<index)
                    // A service that only a subtree registers is a dependency only of registrations in that subtree.
                    if let home = spec.services[target].registrations.first.map({ spec.registrations[$0].container }),
                        home != container, !spec.isAncestor(home, of: container)
                    {
                        continue
                    }
                    if chosen.insert(target).inserted {
                        registration.dependencies.append(edge(to: target, in: spec, rng: &rng))
                    }
                }
                let hookCount = rng.weighted([(0, 82), (1, 15), (2, 3)])
                registration.hooks = Array(repeating: HookSpec(edges: [], fault: nil), count: hookCount)
                if shape.faults, rng.chance(0.04) {
                    registration.fault = Fault(
                        call: rng.int(in: 1...3), step: rng.int(in: 0...registration.dependencies.count))
                }
                if position == 0, rng.chance(0.1), !spec.services[index].kind.isValue {
                    registration.hasForward = true
                    spec.services[index].forwardRegistration = id
                }
                if position > 0, rng.chance(0.15) {
                    registration.initiallyRegistered = false
                }
                spec.registrations.append(registration)
                spec.services[index].registrations.append(id)
                spec.registrationIn[container][index] = id
            }
        }
        // Hooks, once every service is registered: mostly back edges, to services further up the graph that may
        // depend on the hook's own service; never to a service the hook's container cannot see.
        for id in spec.registrations.indices {
            let registration = spec.registrations[id]
            for hook in registration.hooks.indices {
                var edges: [Edge] = []
                for _ in 0..<rng.int(in: 1...2) {
                    let index = registration.service
                    let target =
                        index + 1 < serviceCount && rng.chance(0.6)
                        ? rng.int(in: (index + 1)..<serviceCount) : rng.int(in: 0..<serviceCount)
                    guard spec.lookup(target, from: registration.container) != nil else { continue }
                    edges.append(edge(to: target, in: spec, rng: &rng))
                }
                spec.registrations[id].hooks[hook].edges = edges
                if shape.faults, rng.chance(0.08) {
                    spec.registrations[id].hooks[hook].fault = Fault(
                        call: rng.int(in: 1...3), step: rng.int(in: 0...edges.count))
                }
            }
        }

        // The operations: mostly resolves of services high in the graph, from anywhere in the tree.
        for _ in 0..<rng.int(in: shape.operations) {
            let roll = rng.int(in: 0..<100)
            if roll < 76 {
                let target =
                    rng.chance(0.7) ? rng.int(in: (serviceCount * 2 / 3)..<serviceCount) : rng.int(in: 0..<serviceCount)
                spec.operations.append(
                    .resolve(
                        from: rng.int(in: 0..<spec.containers.count), edge: edge(to: target, in: spec, rng: &rng)))
            } else if roll < 88 {
                let stride = rng.int(in: 1...3)
                spec.operations.append(.release(stride: stride, offset: rng.int(in: 0..<stride)))
            } else if roll < 92 {
                spec.operations.append(
                    .reset(
                        container: rng.int(in: 0..<spec.containers.count), scope: rng.chance(0.5) ? .permanent : .weak))
            } else if roll < 99 {
                // Mostly overrides: registering and removing them is what invalidates the look-ups children cached.
                let overrides = spec.registrations.filter { $0.container != 0 }
                let registration =
                    !overrides.isEmpty && rng.chance(0.8)
                    ? rng.pick(overrides).id : rng.int(in: 0..<spec.registrations.count)
                spec.operations.append(rng.chance(0.5) ? .register(registration) : .unregister(registration))
            } else if spec.containers.count > 1 {
                spec.operations.append(.close(rng.int(in: 1..<spec.containers.count)))
            }
        }
        return spec
    }

    private static func edge(to target: Int, in spec: GraphSpec, rng: inout SplitMix64) -> Edge {
        let via: EdgeVia
        if spec.services[target].forwardRegistration != nil, rng.chance(0.4) {
            via = .forward
        } else if rng.chance(0.08) {
            via = .optional
        } else {
            via = .direct
        }
        let arguments: Arguments
        switch spec.services[target].shape {
        case .none: arguments = .none
        case .int: arguments = .int(rng.int(in: 0...2))
        case .stringInt: arguments = .stringInt(rng.chance(0.5) ? "x" : "y", rng.int(in: 0...2))
        }
        return Edge(service: target, arguments: arguments, via: via)
    }
}

// MARK: - The instances the graphs build

/// What every factory of a random graph builds: which registration and which call made it, with what arguments,
/// and what it was built from. Identity is the serial: the model numbers instances in the order the factories must
/// finish, so a real instance and the model's agree exactly when their serials do.
class PNode: @unchecked Sendable {
    let serial: Int
    let registration: Int
    let arguments: Arguments
    /// Strong, like ordinary dependencies. Always lower in the graph, so these never form a cycle.
    let dependencies: [PNode?]
    /// The serials of what the hooks resolved; not references, so back edges never form a retain cycle.
    var hookReferences: [Int?] = []

    required init(serial: Int, registration: Int, arguments: Arguments, dependencies: [PNode?]) {
        self.serial = serial
        self.registration = registration
        self.arguments = arguments
        self.dependencies = dependencies
    }
}

final class PA: PNode, @unchecked Sendable {}
final class PB: PNode, @unchecked Sendable {}
final class PC: PNode, @unchecked Sendable {}
/// Registered as `any PShape`.
final class PD: PNode, PShape, @unchecked Sendable {
    var node: PNode { self }
}
/// Registered as `Any`.
final class PE: PNode, @unchecked Sendable {}
/// Held by a `PValue`.
final class PF: PNode, @unchecked Sendable {}
