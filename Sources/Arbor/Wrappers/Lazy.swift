internal import ArborPrimitives

/// A service that is resolved on first use, then kept: ask for `Lazy<T>` to put off building a `T` until it is
/// needed. It can also break a cycle for a permanent or weak `T`; for a graph-scoped `T` used after the resolution
/// that made the `Lazy` has finished, it resolves a new instance, so wire graph-scoped cycles with `initCompleted`.
///
/// ```swift
/// container.register(Engine.self) { _ in V8() }
/// container.register(Car.self) { r in Car(engine: try r.resolve(Lazy<Engine>.self)) }
///
/// let lazy = try container.resolve(Lazy<Engine>.self)   // no Engine built yet
/// let engine = try lazy.instance                         // built now
/// let same = try lazy.instance                           // the same instance: not resolved again
/// ```
///
/// You never register a `Lazy` yourself: Arbor makes one for any `T` that is registered, under the name and
/// argument types you ask for. Runtime arguments are captured when the `Lazy` is resolved and passed to `T`'s
/// factory on first use:
///
/// ```swift
/// let greeter = try container.resolve(Lazy<Greeter>.self, name: "formal", arguments: "Ann", 3)
/// ```
///
/// - Misconfiguration shows early: resolving `Lazy<T>` throws ``ResolutionError/Reason/notRegistered`` at once when
///   `T` has no registration (under that name and argument types).
/// - `T` is resolved in the container that resolved the `Lazy` (for a `Lazy` built inside a permanent service's
///   factory, the container that owns that registration), so a child's overrides apply as they would have.
/// - Used while the resolution that made it is still running — typically in an `initCompleted` hook — the `Lazy`
///   joins that resolution and shares its graph-scoped instances. Used later, it starts a new resolution.
/// - If resolving `T` throws, ``instance`` throws that ``ResolutionError`` and nothing is kept: the next access
///   tries again.
///
/// `Lazy` is `Sendable`, and ``instance`` may be read from any thread. Resolving happens outside its lock, so a
/// `Lazy` can never take part in a deadlock; if several threads read a fresh `Lazy` at the same moment, each may
/// resolve `T`, the first result to arrive is kept, and every caller gets that one. Like the container, a `Lazy`
/// hands its instance to whichever thread asks, and its captured arguments to `T`'s factory on whichever thread
/// reads it first.
public final class Lazy<Service>: @unchecked Sendable {
    private enum State {
        case pending(() throws -> Service)
        case resolved(Service)
    }

    /// The way to resolve the service until it is resolved, then the service. Holding only one of them means a
    /// used `Lazy` no longer keeps the container (or the resolution) it came from alive.
    private let state: Protected<State>

    /// A `Lazy` that is resolved already: what a ``LazyInject`` holds once its property was set.
    init(holding service: Service) {
        state = .make(.resolved(service))
    }

    init(resolve: @escaping () throws -> Service) {
        state = .make(.pending(resolve))
    }

    /// The service: resolved on the first access, then the same value on every access.
    ///
    /// ```swift
    /// let engine = try lazyEngine.instance
    /// ```
    ///
    /// Throws the ``ResolutionError`` of a failed resolve; a later access tries again.
    public var instance: Service {
        get throws {
            let resolve: () throws -> Service
            switch state.withLock({ $0 }) {
            case .resolved(let service): return service
            case .pending(let pending): resolve = pending
            }
            let resolved = try resolve()
            let (service, dropped): (Service, State?) = state.withLock { state in
                if case .resolved(let first) = state { return (first, nil) }
                defer { state = .resolved(resolved) }
                return (resolved, state)
            }
            // Released after the lock: the closure may hold the last reference to a container.
            withExtendedLifetime(dropped) {}
            return service
        }
    }

    /// Whether ``instance`` has been resolved and is kept.
    ///
    /// ```swift
    /// let lazy = try container.resolve(Lazy<Engine>.self)
    /// print(lazy.isResolved)  // false
    /// _ = try lazy.instance
    /// print(lazy.isResolved)  // true
    /// ```
    public var isResolved: Bool {
        state.withLock { state in
            if case .resolved = state { return true }
            return false
        }
    }
}

extension Lazy: DeferredResolving {}

/// A wrapper that resolves its service later, made from a closure that does: `Lazy` and `Provider`. Resolving one is
/// deriving it (``DerivedService``) the same way for both: check that the service resolves, capture what it needs.
protocol DeferredResolving: DerivedService {
    associatedtype Service
    init(resolve: @escaping () throws -> Service)
}

extension DeferredResolving {
    /// The key of the service a wrapper of `key` resolves: an optional `Lazy` or `Provider` of an unregistered service
    /// is `nil`, as an optional of the service itself is.
    static func serviceKey(for key: ServiceKey) -> ServiceKey {
        ServiceKey(serviceType: Service.self, name: key.name, argumentsType: key.argumentsType)
    }

    static func derive<each Argument>(_ at: Derivation, arguments: repeat each Argument) throws -> Self {
        Self(
            resolve: try deferredResolve(
                Service.self, by: Self.self, in: at.resolution, name: at.name, depth: at.depth,
                arguments: repeat each arguments))
    }
}

/// What `Lazy` and `Provider` do when they are resolved: check that `Service` can be resolved under this name and
/// these argument types, then return a closure that resolves it later, with the arguments captured now.
///
/// The closure resolves through ``Resolution/resolveLater(_:name:in:joining:arguments:)``: within the resolution
/// that made the wrapper while it is the one running on the calling thread, sharing its graph, otherwise as a new
/// top-level resolution. Either way the look-up starts in the container where the wrapper was resolved. It keeps
/// that container and the resolution's identity, nothing more.
///
/// A service that only an `async` resolve can build throws ``ResolutionError/Reason/asyncRequired`` from the closure,
/// saying that the wrapper's `instance` is synchronous, and what to do instead.
func deferredResolve<Service, each Argument>(
    _ serviceType: Service.Type,
    by wrapper: Any.Type,
    in resolution: Resolution,
    name: String?,
    depth: Int,
    arguments: repeat each Argument
) throws -> () throws -> Service {
    let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
    if !resolution.canResolve(key),
        !(serviceType is any DerivedService.Type) || serviceType is any DeferredResolving.Type
    {
        // Nothing is registered: resolving it now throws `.notRegistered` for `Service` itself, with the path and
        // the registrations under other names or argument types. (A derived service such as `Optional<T>` always
        // resolves, so it is left for later. A `Lazy` or `Provider` is resolved now: that checks its own service, and
        // builds nothing.)
        _ = try resolution.resolve(serviceType, name: name, depth: depth, arguments: repeat each arguments)
    }
    resolution.observeWrapper(wrapper, of: key)
    let context = resolution.currentContext
    let identity = resolution.identity
    // Resolved at the top (`container.resolve(Lazy<…>.self)`), not by a factory: there is no resolver to keep.
    let fromAFactory = depth > 0
    return {
        do {
            return try Resolution.resolveLater(
                serviceType, name: name, in: context, joining: identity, arguments: repeat each arguments)
        } catch var error as ResolutionError where error.isAsyncRequired {
            let type = "\(Service.self)".contains(" ") ? "(\(Service.self))" : "\(Service.self)"
            let how =
                fromAFactory
                ? """
                through the resolver your factory was given: keep it (`let resolver = r`), then \
                `try await resolver.resolve(\(type).self)`.
                """
                : "from the container: `try await container.resolve(\(type).self)`."
            error.hint = """
                 \(wrapper) resolves it when its `instance` is read, which is synchronous. Where you read it, \
                resolve \(type) with `try await` instead, \(how)
                """
            throw error
        }
    }
}
