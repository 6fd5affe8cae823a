import Arbor

/// A small, slow, obviously-correct model of the rules in API.md §4–5, run against the same `GraphSpec` as a real
/// container, to predict every instance each operation must create (and so which ones must be identical), how many
/// times each factory and hook runs, what error a resolve throws with which path, and which instances are alive.
///
/// The rules it walks, in the order Arbor applies them:
/// - a resolve at depth `d` fails with `.depthLimitExceeded` if `d` is past the limit of the container the top-level
///   resolve started in (negative limits count as 0), before anything else;
/// - a key is looked up from the current context container up to the root, nearest first; none: `.notRegistered`;
/// - transient builds; graph shares per (registration, context container) within one top-level resolve;
/// - permanent and weak share through the registration: a kept instance (a weak one only while alive), else the
///   instance this resolve is building, else this resolve builds it *with the owning container as context*;
/// - a build pushes a frame (a frame already on the path is a cycle), runs the factory, which resolves its
///   dependencies one level deeper, then queues the instance's hooks;
/// - after the outermost factory returns, hooks run in queue order with the context, depth and path their instance
///   was built with; what they resolve goes one level deeper and queues more hooks;
/// - success commits the permanent and weak instances built; any error discards them, and everything the failed
///   resolve built is released. A ResolutionError passes through factories unchanged; any other error becomes
///   `.factoryFailed` with the path ending at the factory, or for a hook at the key of the hook's instance;
/// - an `.optional` edge is `nil` when the resolve fails with `.notRegistered` for the service's own key;
/// - a `.forward` edge builds a transient frame under the forward's key, in whose build the target registration is
///   looked up from the container that holds the forward, at the same depth.
///
/// Liveness follows ARC exactly: the graph's strong references form a DAG, so an instance is alive iff it is
/// reachable from the roots the test holds or from a permanent instance a container keeps.
final class ReferenceModel {
    struct Instance {
        let serial: Int
        let registration: Int
        let arguments: Arguments
        var dependencies: [Int?]
        var hookReferences: [Int?] = []
    }

    enum Reason: Equatable, CustomStringConvertible {
        case notRegistered
        case circularDependency
        case depthLimitExceeded
        case factoryFailed(InjectedFault)
        case containerClosed

        var description: String {
            switch self {
            case .notRegistered: "notRegistered"
            case .circularDependency: "circularDependency"
            case .depthLimitExceeded: "depthLimitExceeded"
            case .factoryFailed(let fault): "factoryFailed(\(fault))"
            case .containerClosed: "containerClosed"
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let reason: Reason
        let key: ServiceKey
        let path: [ServiceKey]

        var description: String {
            "\(reason) for \(key), path \(path.map(\.description).joined(separator: " → "))"
        }
    }

    enum Outcome: CustomStringConvertible {
        /// The serial of the instance returned, or `nil` for an optional that found no registration.
        case success(Int?)
        case failure(Failure)
        /// Not a resolve.
        case done

        var description: String {
            switch self {
            case .success(let serial?): "success #\(serial)"
            case .success(nil): "success nil"
            case .failure(let failure): "failure \(failure)"
            case .done: "done"
            }
        }
    }

    /// Thrown (model only) when a resolve needs more work than the budget: the generator then draws another graph.
    private struct OverBudget: Error {}

    private enum SlotID: Hashable {
        case registration(Int)
        case forward(Int)
    }

    private struct Slot: Hashable {
        let id: SlotID
        let context: Int
    }

    private struct PendingHook {
        let registration: Int
        let instance: Int
        let path: [ServiceKey]
        let depth: Int
        let context: Int
    }

    let spec: GraphSpec
    private(set) var factoryCalls: [Int]
    private(set) var hookCalls: [[Int]]
    private(set) var instances: [Instance] = []
    private(set) var alive: [Bool] = []
    /// The permanent and weak instances the containers keep, by registration.
    private(set) var kept: [Int: Int] = [:]
    /// The roots the test holds, in the order it got them.
    private(set) var held: [Int] = []
    /// Which registrations are in their containers now.
    private(set) var present: [Bool]
    /// Which containers are closed.
    private(set) var closed: [Bool]

    // The state of the resolve in progress.
    private var graph: [Slot: Int] = [:]
    private var claims: [Int: Int?] = [:]
    private var claimOrder: [Int] = []
    private var building: [(key: ServiceKey, slot: Slot)] = []
    private var hookPath: [ServiceKey] = []
    private var pending: [PendingHook] = []
    private var context = 0
    private var maxDepth = 200
    private var work = 0
    private let workBudget: Int

    init(_ spec: GraphSpec, workPerResolve: Int = .max) {
        self.spec = spec
        factoryCalls = Array(repeating: 0, count: spec.registrations.count)
        hookCalls = spec.registrations.map { Array(repeating: 0, count: $0.hooks.count) }
        present = spec.registrations.map(\.initiallyRegistered)
        closed = Array(repeating: false, count: spec.containers.count)
        workBudget = workPerResolve
    }

    var nextSerial: Int { instances.count }

    /// What the model expects after one operation.
    struct Step {
        let outcome: Outcome
        /// The instances whose liveness to check: those alive before the operation and those it created.
        let checkAlive: [Int]
        /// Which instances are alive after it, by serial.
        let alive: [Bool]
        let factoryCalls: [Int]
        let hookCalls: [[Int]]
        let nextSerial: Int
        /// For a failed resolve: whether the model itself rolled back (kept nothing new, left nothing alive).
        let rolledBack: Bool
    }

    /// Runs every operation of `spec`: the expected steps and every instance, or `nil` if a resolve needs more
    /// factory and hook calls than `workPerResolve`.
    static func run(_ spec: GraphSpec, workPerResolve: Int) -> (steps: [Step], instances: [Instance])? {
        let model = ReferenceModel(spec, workPerResolve: workPerResolve)
        var steps: [Step] = []
        for operation in spec.operations {
            let liveBefore = model.liveSerials
            let firstNew = model.nextSerial
            let keptBefore = model.kept
            guard let outcome = try? model.applyThrowingOverBudget(operation) else { return nil }
            var rolledBack = true
            if case .failure = outcome {
                rolledBack =
                    model.kept == keptBefore && !(firstNew..<model.nextSerial).contains(where: { model.alive[$0] })
            }
            steps.append(
                Step(
                    outcome: outcome, checkAlive: liveBefore + Array(firstNew..<model.nextSerial), alive: model.alive,
                    factoryCalls: model.factoryCalls, hookCalls: model.hookCalls, nextSerial: model.nextSerial,
                    rolledBack: rolledBack))
        }
        return (steps, model.instances)
    }

    private func applyThrowingOverBudget(_ operation: Operation) throws -> Outcome {
        switch operation {
        case .resolve(let from, let edge):
            return try topLevelResolve(edge, from: from)
        case .release(let stride, let offset):
            held = held.enumerated().filter { $0.offset % stride != offset }.map(\.element)
            updateLiveness()
            return .done
        case .reset(let container, let scope):
            for registration in spec.registrations where registration.container == container {
                if registration.scope == scope { kept[registration.id] = nil }
            }
            updateLiveness()
            return .done
        case .register(let id):
            // A new registration replaces the old one, and drops the instance it held.
            present[id] = true
            kept[id] = nil
            updateLiveness()
            return .done
        case .unregister(let id):
            let registration = spec.registrations[id]
            let service = spec.services[registration.service]
            for other in spec.services where other.kind == service.kind && other.name == service.name {
                guard let removed = spec.registrationIn[registration.container][other.index] else { continue }
                present[removed] = false
                kept[removed] = nil
            }
            updateLiveness()
            return .done
        case .close(let container):
            for index in spec.containers.indices where index == container || spec.isAncestor(container, of: index) {
                closed[index] = true
            }
            for registration in spec.registrations where closed[registration.container] {
                kept[registration.id] = nil
            }
            updateLiveness()
            return .done
        }
    }

    // MARK: Resolving

    private func topLevelResolve(_ edge: Edge, from container: Int) throws -> Outcome {
        graph = [:]
        claims = [:]
        claimOrder = []
        building = []
        hookPath = []
        pending = []
        context = container
        maxDepth = spec.containers[container].effectiveDepthLimit
        work = 0
        if closed[container] {
            let service = spec.services[edge.service]
            let key =
                switch edge.via {
                case .direct: service.key
                case .optional: service.optionalKey
                case .forward: service.forwardKey
                }
            return .failure(Failure(reason: .containerClosed, key: key, path: [key]))
        }
        do {
            let result = try resolve(edge, depth: 0)
            try runHooks()
            for registration in claimOrder {
                if let serial = claims[registration], let serial { kept[registration] = serial }
            }
            if let result { held.append(result) }
            updateLiveness()
            return .success(result)
        } catch let failure as Failure {
            updateLiveness()
            return .failure(failure)
        }
    }

    private var path: [ServiceKey] { hookPath + building.map(\.key) }

    private func fail(_ reason: Reason, _ key: ServiceKey) -> Failure {
        Failure(reason: reason, key: key, path: path + [key])
    }

    private func resolve(_ edge: Edge, depth: Int) throws -> Int? {
        let service = spec.services[edge.service]
        switch edge.via {
        case .direct:
            return try resolveService(edge.service, arguments: edge.arguments, depth: depth, lookupFrom: context)
        case .optional:
            guard depth <= maxDepth else { throw fail(.depthLimitExceeded, service.optionalKey) }
            do {
                return try resolveService(edge.service, arguments: edge.arguments, depth: depth, lookupFrom: context)
            } catch let failure as Failure where failure.reason == .notRegistered && failure.key == service.key {
                return nil
            }
        case .forward:
            let key = service.forwardKey
            guard depth <= maxDepth else { throw fail(.depthLimitExceeded, key) }
            guard let owner = spec.lookupForward(edge.service, from: context, present: present) else {
                throw fail(.notRegistered, key)
            }
            let slot = Slot(id: .forward(edge.service), context: context)
            if building.contains(where: { $0.slot == slot }) { throw fail(.circularDependency, key) }
            building.append((key, slot))
            defer { building.removeLast() }
            return try resolveService(edge.service, arguments: edge.arguments, depth: depth, lookupFrom: owner)
        }
    }

    private func resolveService(_ index: Int, arguments: Arguments, depth: Int, lookupFrom: Int) throws -> Int {
        let key = spec.services[index].key
        guard depth <= maxDepth else { throw fail(.depthLimitExceeded, key) }
        guard let id = spec.lookup(index, from: lookupFrom, present: present) else { throw fail(.notRegistered, key) }
        let registration = spec.registrations[id]
        switch registration.scope {
        case .transient:
            return try build(id, key: key, slot: Slot(id: .registration(id), context: context), arguments, depth)
        case .graph:
            let slot = Slot(id: .registration(id), context: context)
            if let shared = graph[slot] { return shared }
            let serial = try build(id, key: key, slot: slot, arguments, depth)
            graph[slot] = serial
            return serial
        case .weak, .permanent:
            if let serial = kept[id], registration.scope == .permanent || alive[serial] { return serial }
            if let claim = claims[id] {
                guard let serial = claim else { throw fail(.circularDependency, key) }
                return serial
            }
            claims[id] = .some(nil)
            claimOrder.append(id)
            let saved = context
            context = registration.container
            defer { context = saved }
            do {
                let serial = try build(
                    id, key: key, slot: Slot(id: .registration(id), context: registration.container), arguments, depth)
                if registration.scope == .weak, spec.services[index].kind.isValue {
                    // A value has no identity to share: built like a weak instance, from its container, and then kept
                    // by nothing — the next resolve builds another, in this resolution too.
                    claims[id] = nil
                    claimOrder.removeAll { $0 == id }
                    return serial
                }
                claims[id] = .some(serial)
                return serial
            } catch {
                claims[id] = nil
                claimOrder.removeAll { $0 == id }
                throw error
            }
        }
    }

    private func build(_ id: Int, key: ServiceKey, slot: Slot, _ arguments: Arguments, _ depth: Int) throws -> Int {
        if building.contains(where: { $0.slot == slot }) { throw fail(.circularDependency, key) }
        work += 1
        if work > workBudget { throw OverBudget() }
        building.append((key, slot))
        defer { building.removeLast() }
        let registration = spec.registrations[id]
        factoryCalls[id] += 1
        let call = factoryCalls[id]
        var dependencies: [Int?] = []
        for (step, edge) in registration.dependencies.enumerated() {
            try injectFault(registration.fault, call: call, step: step, registration: id, hook: nil, key: key)
            dependencies.append(try resolve(edge, depth: depth + 1))
        }
        try injectFault(
            registration.fault, call: call, step: registration.dependencies.count, registration: id, hook: nil,
            key: key)
        let serial = instances.count
        instances.append(Instance(serial: serial, registration: id, arguments: arguments, dependencies: dependencies))
        alive.append(true)
        if !registration.hooks.isEmpty {
            pending.append(
                PendingHook(registration: id, instance: serial, path: path, depth: depth, context: context))
        }
        return serial
    }

    private func injectFault(
        _ fault: Fault?, call: Int, step: Int, registration: Int, hook: Int?, key: ServiceKey,
        hookPath: [ServiceKey]? = nil
    ) throws {
        guard let fault, fault.call == call, fault.step == step else { return }
        let injected = InjectedFault(registration: registration, hook: hook, call: call, step: step)
        throw Failure(reason: .factoryFailed(injected), key: key, path: hookPath ?? path)
    }

    private func runHooks() throws {
        var next = 0
        while next < pending.count {
            let hook = pending[next]
            next += 1
            let saved = (context, hookPath)
            context = hook.context
            hookPath = hook.path
            defer { (context, hookPath) = saved }
            let registration = spec.registrations[hook.registration]
            for (index, hookSpec) in registration.hooks.enumerated() {
                work += 1
                if work > workBudget { throw OverBudget() }
                hookCalls[hook.registration][index] += 1
                let call = hookCalls[hook.registration][index]
                let key = hook.path[hook.path.count - 1]
                for (step, edge) in hookSpec.edges.enumerated() {
                    try injectFault(
                        hookSpec.fault, call: call, step: step, registration: hook.registration, hook: index, key: key,
                        hookPath: hook.path)
                    let resolved = try resolve(edge, depth: hook.depth + 1)
                    instances[hook.instance].hookReferences.append(resolved)
                }
                try injectFault(
                    hookSpec.fault, call: call, step: hookSpec.edges.count, registration: hook.registration,
                    hook: index,
                    key: key, hookPath: hook.path)
            }
        }
    }

    // MARK: Liveness

    /// Marks dead every instance that is no longer reachable from the held roots or a kept permanent instance.
    private func updateLiveness() {
        var reachable = Array(repeating: false, count: instances.count)
        var stack = held
        for (registration, serial) in kept where spec.registrations[registration].scope == .permanent {
            stack.append(serial)
        }
        while let serial = stack.popLast() {
            guard !reachable[serial] else { continue }
            reachable[serial] = true
            for case let dependency? in instances[serial].dependencies where !reachable[dependency] {
                stack.append(dependency)
            }
        }
        for serial in alive.indices where alive[serial] && !reachable[serial] {
            alive[serial] = false
        }
        kept = kept.filter { alive[$0.value] }
    }

    var liveSerials: [Int] { alive.indices.filter { alive[$0] } }
}

/// What an injected fault throws: which registration's factory (or which of its hooks), on which call, after how
/// many resolves.
struct InjectedFault: Error, Equatable, Sendable, CustomStringConvertible {
    let registration: Int
    let hook: Int?
    let call: Int
    let step: Int

    var description: String {
        let place = hook.map { "hook \($0) of r\(registration)" } ?? "factory of r\(registration)"
        return "injected fault in the \(place), call \(call), after \(step) resolve(s)"
    }
}
