/// A way to resolve a service again and again: ask for `Provider<T>` when an object needs a fresh `T` now and then
/// (a new request, a new view model) rather than one `T` for its lifetime.
///
/// ```swift
/// container.register(Request.self) { _ in Request() }.inObjectScope(.transient)
///
/// let requests = try container.resolve(Provider<Request>.self)
/// let first = try requests.instance    // resolved now
/// let second = try requests.instance   // resolved again: a new transient Request
/// ```
///
/// Each ``instance`` is a resolve, so `T`'s scope decides what it returns: a new transient instance every time,
/// the same permanent one every time, and a new graph instance for every access made after the resolution that
/// built the `Provider` has finished.
///
/// You never register a `Provider` yourself: Arbor makes one for any `T` that is registered, under the name and
/// argument types you ask for; runtime arguments are captured when the `Provider` is resolved and passed to `T`'s
/// factory on every access:
///
/// ```swift
/// let greeters = try container.resolve(Provider<Greeter>.self, arguments: "Ann", 3)
/// ```
///
/// - Resolving `Provider<T>` throws ``ResolutionError/Reason/notRegistered`` at once when `T` has no registration.
/// - `T` is resolved in the container that resolved the `Provider` (for one built inside a permanent service's
///   factory, the container that owns that registration).
/// - Used while the resolution that made it is still running — typically in an `initCompleted` hook — the
///   `Provider` joins that resolution and shares its graph-scoped instances; used later, every access starts a new
///   resolution.
///
/// `Provider` is `Sendable`; ``instance`` may be read from any thread at once.
public final class Provider<Service>: @unchecked Sendable {
    /// Immutable after init; the captured arguments are only read.
    private let resolve: () throws -> Service

    init(resolve: @escaping () throws -> Service) {
        self.resolve = resolve
    }

    /// A newly resolved service, on every access.
    ///
    /// ```swift
    /// let request = try requests.instance
    /// ```
    ///
    /// Throws the ``ResolutionError`` of a failed resolve.
    public var instance: Service {
        get throws { try resolve() }
    }
}

extension Provider: DeferredResolving {}
