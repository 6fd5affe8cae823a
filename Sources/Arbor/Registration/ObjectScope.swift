/// How long a resolved instance lives, and who shares it.
///
/// ```swift
/// container.register(Engine.self) { _ in V8() }.inObjectScope(.permanent)   // one for the container and its children
/// container.register(Session.self) { _ in Session() }.inObjectScope(.weak)  // shared while someone holds it
/// container.register(Request.self) { _ in Request() }.inObjectScope(.transient) // a new one every time
/// ```
///
/// | scope | instances | kept by |
/// | --- | --- | --- |
/// | ``transient`` | a new one for every resolve, also within one graph | the caller |
/// | ``graph`` (the default) | one per top-level `resolve` call, shared by everything built in it | the caller |
/// | ``weak`` | one per registration while anything else holds it | the caller; the container only weakly |
/// | ``permanent`` (or ``container``) | one per registration | the container that holds the registration |
/// | ``perContainer`` | one per container that resolves it: a child per request gets its own | the container the top-level `resolve` started in |
///
/// Permanent and weak instances belong to the container that holds the registration and are built from it,
/// so a child container's override never ends up inside an instance the parent shares. Transient and graph
/// instances are built from the container where the resolution started, so they do see a child's overrides.
///
/// You can define scopes of your own: a custom scope keeps instances like ``permanent`` (or like ``weak``)
/// until you drop them with ``Container/resetObjectScope(_:)``. A user session is the classic case:
///
/// ```swift
/// extension ObjectScope {
///     static let session = ObjectScope(name: "session", retention: .strong)
/// }
/// container.register(Cart.self) { _ in Cart() }.inObjectScope(.session)
/// // on logout:
/// container.resetObjectScope(.session)
/// ```
public struct ObjectScope: Hashable, Sendable, CustomStringConvertible {
    /// How a container holds the instances of a scope that shares them across resolutions.
    public enum Retention: Hashable, Sendable {
        /// The container keeps the instance until the scope is reset or the registration is replaced.
        case strong
        /// The container keeps the instance only while something else holds it (value types are never kept).
        case weak
    }

    /// Where the instances of a scope live. Internal: users choose among the scopes, not among storages.
    enum Storage: Hashable, Sendable {
        case none
        case graph
        case strong
        case weak
        /// Strongly, in the container the top-level resolve started in.
        case perContainer
    }

    /// The scope's name, as it appears in descriptions.
    public let name: String
    let storage: Storage

    private init(name: String, storage: Storage) {
        self.name = name
        self.storage = storage
    }

    /// Makes a scope of your own that keeps instances per registration, strongly or weakly, until
    /// ``Container/resetObjectScope(_:)`` is called with it. Two scopes are the same when their names and
    /// retentions are.
    ///
    /// ```swift
    /// extension ObjectScope {
    ///     static let session = ObjectScope(name: "session", retention: .strong)
    /// }
    /// ```
    public init(name: String, retention: Retention) {
        self.init(name: name, storage: retention == .strong ? .strong : .weak)
    }

    /// A new instance every time the service is resolved, even within one graph.
    public static let transient = ObjectScope(name: "transient", storage: .none)
    /// One instance per resolution: everything built by one top-level `resolve` call, including its
    /// `initCompleted` hooks, shares it. The default scope.
    public static let graph = ObjectScope(name: "graph", storage: .graph)
    /// Shared while anything else holds it; the next resolve after the last strong reference is gone builds
    /// a new one. Value types behave as ``transient``.
    public static let weak = ObjectScope(name: "weak", storage: .weak)
    /// One instance per registration, kept by the container that holds the registration and shared with all
    /// of its descendants.
    public static let permanent = ObjectScope(name: "permanent", storage: .strong)
    /// Another name for ``permanent``.
    public static var container: ObjectScope { .permanent }

    /// One instance per container that resolves it — the container the top-level `resolve` (or the `Lazy` or
    /// `Provider`) started in — kept by that container, shared by everything resolved from it, and released with
    /// its ``Registration/onRelease(_:)-21slw`` hooks when that container is closed or deinitialised. Register it once,
    /// in the root or an ``Assembly``; a child per request, test or session then gets an instance of its own:
    ///
    /// ```swift
    /// app.register(UnitOfWork.self) { r in UnitOfWork(database: try r.resolve()) }
    ///     .inObjectScope(.perContainer)
    ///     .onRelease { work in work.rollBackIfOpen() }
    ///
    /// let request = app.makeChild()
    /// let work = try request.resolve(UnitOfWork.self)      // this request's own
    /// _ = try request.resolve(NotesController.self)        // shares `work`
    /// request.close()                                      // rolls it back if still open
    /// ```
    ///
    /// The instance is built from the container that keeps it, so it sees that container's registrations (the
    /// request's values) and its ancestors'. A permanent or weak service must not depend on one: it would keep the
    /// instance of whichever container resolved it first — a *captive dependency*, which ``Container/validate(samples:)``
    /// reports. Give the holder `.perContainer` too, or pass the instance to the holder's methods from code that has
    /// the container at hand. A ``Provider`` or ``Lazy`` the holder keeps does not help: it resolves where the holder
    /// was built, and hands every container the same instance.
    public static let perContainer = ObjectScope(name: "perContainer", storage: .perContainer)

    /// The scope's name: `transient`, `graph`, `weak`, `permanent`, `perContainer`, or the name of a scope of your
    /// own. A scope of your own named like a built-in one that keeps instances otherwise, or with an empty name, says
    /// so: `graph (a scope of your own, strong)`, so that a description of the container does not mislead.
    public var description: String {
        guard storage == .strong || storage == .weak else { return name }
        let builtIn: [ObjectScope] = [.transient, .graph, .weak, .permanent, .perContainer]
        guard name.isEmpty || builtIn.contains(where: { $0.name == name && $0 != self }) else { return name }
        return "\(name.isEmpty ? "unnamed" : name) (a scope of your own, \(storage == .strong ? "strong" : "weak"))"
    }

    /// Whether two scopes are the same: the same name and the same way of keeping instances.
    public static func == (lhs: ObjectScope, rhs: ObjectScope) -> Bool {
        // The kind first: telling two built-in scopes apart needs no string comparison.
        lhs.storage == rhs.storage && lhs.name == rhs.name
    }

    /// Hashes the name and the way of keeping instances.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(storage)
    }
}
