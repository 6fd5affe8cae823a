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
    /// `SharedBuffer`, weak scope, and nothing holds it: every resolve builds one and caches it weakly.
    func weakBuild() throws -> () throws -> SharedBuffer
    /// `weakBuild`, with `SharedBuffer` registered as `any Buffering`.
    func weakBuildProtocol() throws -> () throws -> any Buffering
    /// Registers every type in `types` (transient) in one container and resolves `target`.
    func largeContainer(
        _ types: [any NumberedService.Type], resolving target: any NumberedService.Type
    ) throws -> () throws -> AnyObject
    /// Creates a container and registers every type in `types`; returns the container.
    func registerAll(_ types: [any NumberedService.Type]) -> () throws -> AnyObject
    /// Like `graph10`, but safe to call from several threads at once, the way the library
    /// documents for concurrent use.
    func concurrentGraph10() throws -> @Sendable () throws -> AppRoot

    /// One request: make a child of the app's container, give it the request's `RequestInfo` and
    /// `CurrentUser` as instances, resolve `NoteHandler` (Model.swift) from it, and end the child.
    /// The app-wide services are permanent in the root and already built when timing starts.
    func requestScope() throws -> () throws -> NoteHandler
    /// Like `requestScope`, but `RequestInfo`, `CurrentUser` and `UnitOfWork` are registered once,
    /// in the root, as one instance per child container, where the library has such a lifetime;
    /// the child registers nothing.
    func requestScopePerContainer() throws -> () throws -> NoteHandler
    /// `requestScope` without its resolve: make a child of the app's container, give it the request's `RequestInfo`
    /// and `CurrentUser` as instances, and end the child; returns the child. What a request's child and its two
    /// values cost before anything is resolved from it: `request_scope` less this row is the resolve.
    func requestValues() throws -> () throws -> AnyObject
    /// `requestValues` with the request's `CurrentUser` resolved from the child, at the top level, before the child
    /// ends; returns the user. What a handler's `request.container.resolve(CurrentUser.self)` costs a request.
    func requestValueResolved() throws -> () throws -> CurrentUser
    /// `requestScope` from two threads at once, on one app container: what a server on two cores does. Its figure is
    /// the speed-up over one thread; what the threads share (the app's container, its registrations and permanent
    /// instances) and write to on every request costs it.
    func concurrentRequestScope() throws -> @Sendable () throws -> NoteHandler
    /// A new container, a registration for every type in `types` (node `i` depends on the nodes
    /// `treeChildren(of: i)`), and one resolve of `types[0]`, the root of the tree.
    func coldStart(_ types: [any NumberedService.Type]) -> () throws -> AnyObject
    /// Makes the app's container (with `Configuration` registered, permanent) and returns an
    /// operation that makes a child of it, registers a `RequestInfo` and a `CurrentUser` instance
    /// in the child, and returns the child.
    func childOfOneParent() -> () throws -> AnyObject
    /// From one long-lived child of the app's container, and safe from several threads at once:
    /// `ConfigurationPanel`, whose `Configuration` is permanent in the root and already built.
    func concurrentSharedPermanent() throws -> @Sendable () throws -> ConfigurationPanel
    /// Like `concurrentSharedPermanent`, with `BufferPanel`, whose `SharedBuffer` is weak in the
    /// root; the returned object holds the instance while the benchmark runs.
    func concurrentSharedWeak() throws -> (
        holding: AnyObject, operation: @Sendable () throws -> BufferPanel
    )

    /// `graph10` with every registration made by the library's autoregistration (the initialiser named, its
    /// parameters resolved by type); `nil` where the library has none. The hand-written baseline is `graph10`'s.
    func autoregisteredGraph10() throws -> (() throws -> AppRoot)?

    /// `graph10` with an observer attached that does nothing with what it sees: the cost of the observer seam itself;
    /// `nil` where the library has no observers.
    func observedGraph10() throws -> (() throws -> AppRoot)?
    /// `coldStart` inside a profile of it, the profile's text made at the end: what profiling a launch costs; `nil`
    /// where the library has no profiles.
    func profiledColdStart(_ types: [any NumberedService.Type]) -> (() throws -> AnyObject)?

    /// `graph10` in `async` code, every object built by an `async` factory (`AsyncConstruction`); `nil` where the
    /// library has no `async` factories.
    func asyncGraph10() throws -> (@Sendable () async throws -> AppRoot)?
    /// `graph10`'s synchronous factories, resolved from `async` code the way the library does it there; `nil` where
    /// the library has no `async` resolve.
    func asyncResolveOfSync() throws -> (@Sendable () async throws -> AppRoot)?
}

extension LibraryAdapter {
    func autoregisteredGraph10() throws -> (() throws -> AppRoot)? { nil }
    func observedGraph10() throws -> (() throws -> AppRoot)? { nil }
    func profiledColdStart(_ types: [any NumberedService.Type]) -> (() throws -> AnyObject)? { nil }
    func asyncGraph10() throws -> (@Sendable () async throws -> AppRoot)? { nil }
    func asyncResolveOfSync() throws -> (@Sendable () async throws -> AppRoot)? { nil }
}

/// A scenario a library cannot take part in: its row says so, and counts as no failure.
struct NotSupported: Error, CustomStringConvertible {
    var description: String { "n/a: the library has no such feature" }
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
        .resolving(
            "autoregistered_graph_10", expecting: .newInstances, check: { $0.sharesStore }
        ) { library in
            guard let operation = try library.autoregisteredGraph10() else { throw NotSupported() }
            return operation
        },
        .resolving(
            "observed_graph_10", expecting: .newInstances, check: { $0.sharesStore }
        ) { library in
            guard let operation = try library.observedGraph10() else { throw NotSupported() }
            return operation
        },
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
        .buildingWeakly("weak_build") { try $0.weakBuild() },
        .buildingWeakly("weak_build_protocol") { library in
            let operation = try library.weakBuildProtocol()
            return { try operation() as! SharedBuffer }
        },
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
        Scenario(name: "concurrent_shared_permanent") { library in
            let operation = try library.concurrentSharedPermanent()
            let first = try operation()
            try verify(first, try operation(), .newInstances) { $0.configuration === first.configuration }
            return .concurrent(threads: 2, operation)
        },
        Scenario(name: "concurrent_shared_weak") { library in
            let (holding, operation) = try library.concurrentSharedWeak()
            let first = try operation()
            try verify(first, try operation(), .newInstances) { $0.buffer === holding }
            return .concurrent(threads: 2, keepingAlive: holding, operation)
        },
        .resolving(
            "request_scope", expecting: .newInstances, check: { $0.isWired }
        ) { try $0.requestScope() },
        .resolving(
            "request_scope_per_container", expecting: .newInstances, check: { $0.isWired }
        ) { try $0.requestScopePerContainer() },
        .resolving("request_values", expecting: .newInstances) { try $0.requestValues() },
        .resolving("request_value_resolved", expecting: .newInstances) { try $0.requestValueResolved() },
        Scenario(name: "concurrent_request_scope") { library in
            let operation = try library.concurrentRequestScope()
            try verify(try operation(), try operation(), .newInstances, check: { $0.isWired })
            return .concurrent(threads: 2, operation)
        },
    ]
    for (name, make) in [
        ("async_graph_10", { (library: any LibraryAdapter) in try library.asyncGraph10() }),
        ("async_resolve_of_sync", { (library: any LibraryAdapter) in try library.asyncResolveOfSync() }),
    ] {
        scenarios.append(
            Scenario(name: name) { library in
                guard let operation = try make(library) else { throw NotSupported() }
                let first = try runAsync(operation)
                try verify(first, try runAsync(operation), .newInstances) { $0.sharesStore }
                return .sequentialAsync(keepingAlive: first, operation)
            })
    }
    let tree = numberedTypes(count: 200)
    scenarios.append(
        .resolving(
            "cold_start_200", expecting: .newInstances,
            check: { type(of: $0) == tree[0] && countNodes($0) == tree.count }
        ) { $0.coldStart(tree) })
    scenarios.append(
        .resolving(
            "cold_start_200_profiled", expecting: .newInstances,
            check: { type(of: $0) == tree[0] && countNodes($0) == tree.count }
        ) { library in
            guard let operation = library.profiledColdStart(tree) else { throw NotSupported() }
            return operation
        })
    for siblings in [10, 10_000, 100_000] {
        scenarios.append(
            Scenario(name: "make_child_\(siblings)_siblings") { library in
                let makeChild = library.childOfOneParent()
                let before = heapBytesInUse()
                let live = try (0..<siblings).map { _ in try makeChild() }
                let bytesPerChild = Double(heapBytesInUse() - before) / Double(siblings)
                var benchmark = Benchmark.sequential(keepingAlive: live as AnyObject, makeChild)
                benchmark.notes.append("\(Int(bytesPerChild.rounded())) heap B per live child")
                return benchmark
            })
    }
    return scenarios
}

/// The nodes of a cold-start tree, counting its root.
private func countNodes(_ root: AnyObject) -> Int {
    guard let node = root as? any NumberedService else { return 0 }
    return 1 + node.dependencies.reduce(0) { $0 + countNodes($1) }
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

extension Scenario {
    /// A weak instance that nothing holds, so that each resolve builds one: checked to be shared while the first is
    /// held, then timed with nothing held.
    static func buildingWeakly(
        _ name: String, _ makeOperation: @escaping (any LibraryAdapter) throws -> () throws -> SharedBuffer
    ) -> Scenario {
        Scenario(name: name) { library in
            let operation = try makeOperation(library)
            try withExtendedLifetime(try operation()) { first in
                try verify(first, try operation(), .sameInstance, check: { _ in true })
            }
            return .sequential(keepingLast: false, operation)
        }
    }
}

/// Checks two results of the same operation, both still alive (so their addresses differ
/// unless they are the same object).
func verify<Service: AnyObject>(
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
