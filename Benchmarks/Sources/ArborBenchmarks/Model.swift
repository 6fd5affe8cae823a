// The object model shared by every library adapter. All adapters build exactly these classes,
// wired the same way, so the only difference between two rows of one scenario is the library
// (or the hand-written code) doing the wiring.

// MARK: - transient_leaf

/// A service with no dependencies.
final class Leaf {
    init() {}
}

// MARK: - graph_10 and concurrent_graph_10

// Ten objects in all, counting the root. Every node is used by exactly one other node, except
// `Store`, which both `Session` and `Catalog` use: the diamond AppRoot → Session → Store and
// AppRoot → Catalog → Store. In graph scope one resolve must build a single `Store`.
//
//                 AppRoot
//              /           \
//         Session          Catalog
//         /     \         /       \
//   AuthClient   Store ←─┘     SearchIndex
//        |         |            /        \
//   TokenCache  Database   Tokenizer    Ranker

final class TokenCache {
    init() {}
}

final class Database {
    init() {}
}

final class Tokenizer {
    init() {}
}

final class Ranker {
    init() {}
}

final class AuthClient {
    let tokens: TokenCache
    init(tokens: TokenCache) { self.tokens = tokens }
}

final class Store {
    let database: Database
    init(database: Database) { self.database = database }
}

final class SearchIndex {
    let tokenizer: Tokenizer
    let ranker: Ranker
    init(tokenizer: Tokenizer, ranker: Ranker) {
        self.tokenizer = tokenizer
        self.ranker = ranker
    }
}

final class Session {
    let auth: AuthClient
    let store: Store
    init(auth: AuthClient, store: Store) {
        self.auth = auth
        self.store = store
    }
}

final class Catalog {
    let store: Store
    let search: SearchIndex
    init(store: Store, search: SearchIndex) {
        self.store = store
        self.search = search
    }
}

/// The root of the graph_10 object graph.
final class AppRoot {
    let session: Session
    let catalog: Catalog
    init(session: Session, catalog: Catalog) {
        self.session = session
        self.catalog = catalog
    }

    /// True when the diamond is wired correctly: one `Store` shared by both branches.
    var sharesStore: Bool { session.store === catalog.store }
}

/// The `graph_10` objects built by `async` functions, for `async_graph_10`: what a factory that awaits looks like.
/// Out of line, so each call is a real `async` call, as it is to an initialiser that awaits something.
enum AsyncConstruction {
    @inline(never) static func tokenCache() async -> TokenCache { TokenCache() }
    @inline(never) static func database() async -> Database { Database() }
    @inline(never) static func tokenizer() async -> Tokenizer { Tokenizer() }
    @inline(never) static func ranker() async -> Ranker { Ranker() }
    @inline(never) static func authClient(tokens: TokenCache) async -> AuthClient { AuthClient(tokens: tokens) }
    @inline(never) static func store(database: Database) async -> Store { Store(database: database) }
    @inline(never) static func searchIndex(tokenizer: Tokenizer, ranker: Ranker) async -> SearchIndex {
        SearchIndex(tokenizer: tokenizer, ranker: ranker)
    }
    @inline(never) static func session(auth: AuthClient, store: Store) async -> Session {
        Session(auth: auth, store: store)
    }
    @inline(never) static func catalog(store: Store, search: SearchIndex) async -> Catalog {
        Catalog(store: store, search: search)
    }
    @inline(never) static func appRoot(session: Session, catalog: Catalog) async -> AppRoot {
        AppRoot(session: session, catalog: catalog)
    }
}

// MARK: - singleton_hit

/// A service created once (permanent scope) and then only looked up.
final class Configuration: Sendable {
    let environment = "production"
    init() {}
}

// MARK: - arguments_2

/// A transient service built from two runtime arguments.
final class Greeter {
    let name: String
    let times: Int
    init(name: String, times: Int) {
        self.name = name
        self.times = times
    }
}

// MARK: - child_depth_N

final class Renderer {
    init() {}
}

/// A transient service with one transient dependency, both registered in the root container
/// and resolved from the deepest of a chain of child containers.
final class ReportPresenter {
    let renderer: Renderer
    init(renderer: Renderer) { self.renderer = renderer }
}

// MARK: - circular_pair

/// Holds its child strongly; the child points back weakly, set after both exist
/// (`initCompleted` in the libraries, a plain assignment by hand).
final class ParentNode {
    let child: ChildNode
    init(child: ChildNode) { self.child = child }
}

final class ChildNode {
    weak var parent: ParentNode?
    init() {}
}

// MARK: - weak_hit

/// A service in weak scope: shared while someone (here: the benchmark) holds it.
final class SharedBuffer: Buffering, Sendable {
    init() {}
}

/// What `SharedBuffer` is registered as in `weak_build_protocol`: a protocol that is not class-bound, as most
/// registrations name their service.
protocol Buffering {}

// MARK: - large_container_N, register_1000 and cold_start

/// A service type that can be built without arguments; each `Numbered` type below is one.
///
/// `Sendable` (they hold no state) so that a `@Sendable` factory may capture the metatype.
protocol NumberedService: AnyObject, Sendable {
    init()
    /// A node of the cold-start tree, holding the nodes it depends on.
    init(dependencies: [any NumberedService])
    var dependencies: [any NumberedService] { get }
}

/// Phantom types: the binary digits, and the end of a number.
enum Zero {}
enum One {}
enum Origin {}

/// One binary digit of a number, followed by the less significant digits in `Rest`.
///
/// Number 5 with three digits is `Numbered<One, Numbered<Zero, Numbered<One, Origin>>>`.
/// Every number is a distinct class with its own metatype, built at run time, so the
/// benchmarks can register 100, 1,000 or 10,000 distinct service types without generating
/// thousands of lines of source.
final class Numbered<Digit, Rest>: NumberedService {
    let dependencies: [any NumberedService]
    init() { dependencies = [] }
    init(dependencies: [any NumberedService]) { self.dependencies = dependencies }
}

/// The distinct service types number `0..<count`, in order, all with the same number of digits.
func numberedTypes(count: Int) -> [any NumberedService.Type] {
    precondition(count > 0)
    let digits = max(1, Int.bitWidth - (count - 1).leadingZeroBitCount)
    var types: [any NumberedService.Type] = []
    types.reserveCapacity(count)
    appendNumberedTypes(after: Origin.self, value: 0, digitsLeft: digits, count: count, to: &types)
    return types
}

/// Appends every number below `count` whose most significant digits are `value` (already
/// spelled as the type `Rest`), with `digitsLeft` digits still to choose.
private func appendNumberedTypes<Rest>(
    after _: Rest.Type,
    value: Int,
    digitsLeft: Int,
    count: Int,
    to types: inout [any NumberedService.Type]
) {
    // Digits are written most significant first, so each new digit wraps the type built so far:
    // the outermost `Numbered` is the least significant digit.
    let zero = value << 1
    let one = value << 1 | 1
    if digitsLeft == 1 {
        if zero < count { types.append(Numbered<Zero, Rest>.self) }
        if one < count { types.append(Numbered<One, Rest>.self) }
        return
    }
    if zero << (digitsLeft - 1) < count {
        appendNumberedTypes(
            after: Numbered<Zero, Rest>.self, value: zero, digitsLeft: digitsLeft - 1,
            count: count, to: &types)
    }
    if one << (digitsLeft - 1) < count {
        appendNumberedTypes(
            after: Numbered<One, Rest>.self, value: one, digitsLeft: digitsLeft - 1,
            count: count, to: &types)
    }
}

// MARK: - concurrent_shared_permanent and concurrent_shared_weak

/// Reads a shared app-wide instance (`Configuration`, permanent in the root) and builds a `Renderer`.
final class ConfigurationPanel {
    let configuration: Configuration
    let renderer: Renderer
    init(configuration: Configuration, renderer: Renderer) {
        self.configuration = configuration
        self.renderer = renderer
    }
}

/// Reads a shared weak instance (`SharedBuffer`, held by the benchmark) and builds a `Renderer`.
final class BufferPanel {
    let buffer: SharedBuffer
    let renderer: Renderer
    init(buffer: SharedBuffer, renderer: Renderer) {
        self.buffer = buffer
        self.renderer = renderer
    }
}

// MARK: - cold_start

/// The dependencies of node `index` in the cold-start tree of `count` nodes: nodes `2 * index + 1`
/// and `2 * index + 2`, where they exist. Node 0 is the root; every other node has one parent.
func treeChildren(of index: Int, count: Int) -> [Int] {
    [2 * index + 1, 2 * index + 2].filter { $0 < count }
}
