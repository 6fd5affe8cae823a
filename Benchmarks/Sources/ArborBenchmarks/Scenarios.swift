// What is measured: the scenarios, and the one protocol a library implements to take part.
//
// To add a library, write one file with a type conforming to `LibraryAdapter` and add an
// instance of it to `libraries` in main.swift.

/// One way of wiring the object model in Model.swift: a DI library, or hand-written code.
///
/// Each method does its setup (containers, registrations, child containers) untimed and returns
/// the operation to time. The operation must do the whole work on every call (resolve from the
/// container, not return a cached result) the way a user of the library would write it. The
/// harness calls it through the closure once per operation; that indirect call is in every row,
/// the manual baseline included.
protocol LibraryAdapter {
    /// The name in the report's `library` column.
    var name: String { get }

    /// `Leaf`, transient.
    func transientLeaf() throws -> () throws -> Leaf
    /// `AppRoot` and its graph (Model.swift), graph scope: one `Store` per resolve.
    func graph10() throws -> () throws -> AppRoot
    /// `Configuration`, permanent; the instance already exists when timing starts.
    func singletonHit() throws -> () throws -> Configuration
    /// `Greeter(name: "Ann", times: 3)`, transient, both values passed as runtime arguments.
    func arguments2() throws -> () throws -> Greeter
    /// `ReportPresenter` and its `Renderer`, both transient and registered in a root container,
    /// resolved from the container `depth` levels of children below it.
    func childDepth(_ depth: Int) throws -> () throws -> ReportPresenter
    /// `ParentNode` ↔ `ChildNode` (`child.parent` set in `initCompleted`), graph scope.
    func circularPair() throws -> () throws -> ParentNode
    /// `SharedBuffer`, weak scope; the benchmark holds the first instance while timing.
    func weakHit() throws -> () throws -> SharedBuffer
    /// Registers every type in `types` (transient) in one container and resolves `target`.
    func largeContainer(
        _ types: [any NumberedService.Type], resolving target: any NumberedService.Type
    ) throws -> () throws -> AnyObject
    /// Creates a container and registers every type in `types`; returns the container.
    func registerAll(_ types: [any NumberedService.Type]) -> () throws -> AnyObject
    /// Like `graph10`, but safe to call from several threads at once, the way the library
    /// documents for concurrent use.
    func concurrentGraph10() throws -> @Sendable () throws -> AppRoot
}

/// A named benchmark that every library runs.
struct Scenario {
    var name: String
    /// Sets up one library's benchmark and checks that its wiring is right.
    var prepare: (any LibraryAdapter) throws -> Benchmark
}

/// Every scenario, in report order.
func allScenarios() -> [Scenario] {
    let sizes = [100, 1_000, 10_000]
    let typesBySize = Dictionary(uniqueKeysWithValues: sizes.map { ($0, numberedTypes(count: $0)) })

    var scenarios: [Scenario] = [
        .resolving("transient_leaf", expecting: .newInstances) { try $0.transientLeaf() },
        .resolving(
            "graph_10", expecting: .newInstances, check: { $0.sharesStore }
        ) { try $0.graph10() },
        .resolving("singleton_hit", expecting: .sameInstance) { try $0.singletonHit() },
        .resolving(
            "arguments_2", expecting: .newInstances, check: { $0.name == "Ann" && $0.times == 3 }
        ) { try $0.arguments2() },
    ]
    for depth in [1, 5, 20] {
        scenarios.append(
            .resolving("child_depth_\(depth)", expecting: .newInstances) { try $0.childDepth(depth) })
    }
    scenarios += [
        .resolving(
            "circular_pair", expecting: .newInstances, check: { $0.child.parent === $0 }
        ) { try $0.circularPair() },
        .resolving("weak_hit", expecting: .sameInstance) { try $0.weakHit() },
    ]
    for size in sizes {
        let types = typesBySize[size]!
        let target = types[size / 2]
        scenarios.append(
            .resolving(
                size == 1_000 ? "large_container" : "large_container_\(size)",
                expecting: .newInstances,
                check: { type(of: $0) == target }
            ) { try $0.largeContainer(types, resolving: target) })
    }
    let registered = typesBySize[1_000]!
    scenarios += [
        Scenario(name: "register_1000") { library in
            .sequential(operationsPerIteration: registered.count, library.registerAll(registered))
        },
        Scenario(name: "concurrent_graph_10") { library in
            let operation = try library.concurrentGraph10()
            try verify(try operation(), try operation(), .newInstances, check: { $0.sharesStore })
            return .concurrent(threads: 2, operation)
        },
    ]
    return scenarios
}

/// Whether two calls of a scenario's operation should return the same object.
enum Sharing {
    case newInstances
    case sameInstance
}

struct WiringError: Error, CustomStringConvertible {
    var description: String
}

extension Scenario {
    /// A scenario that times one operation returning an object. Before timing, it calls the
    /// operation twice and checks the results; the first result stays alive during timing
    /// (which is what keeps a weak instance alive).
    static func resolving<Service: AnyObject>(
        _ name: String,
        expecting sharing: Sharing,
        check: @escaping (Service) -> Bool = { _ in true },
        _ makeOperation: @escaping (any LibraryAdapter) throws -> () throws -> Service
    ) -> Scenario {
        Scenario(name: name) { library in
            let operation = try makeOperation(library)
            let first = try operation()
            try verify(first, try operation(), sharing, check: check)
            return .sequential(keepingAlive: first, operation)
        }
    }
}

/// Checks two results of the same operation, both still alive (so their addresses differ
/// unless they are the same object).
private func verify<Service: AnyObject>(
    _ first: Service, _ second: Service, _ sharing: Sharing, check: (Service) -> Bool
) throws {
    switch sharing {
    case .newInstances where first === second:
        throw WiringError(description: "expected a new instance per call, got the same one twice")
    case .sameInstance where first !== second:
        throw WiringError(description: "expected the same instance on every call, got two")
    default:
        break
    }
    guard check(first), check(second) else {
        throw WiringError(description: "the resolved \(Service.self) is wired wrongly")
    }
}
