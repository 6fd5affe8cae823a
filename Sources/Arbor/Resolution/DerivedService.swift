/// A service Arbor builds from another registration when it has none of its own: `Optional<T>` from `T`
/// (and, with the same mechanism, wrappers such as `Lazy<T>`).
///
/// A registration of the derived type itself, such as `register(Engine?.self) { … }`, takes precedence.
protocol DerivedService {
    /// Builds the service where `at` says — within a resolution, at a depth, from the registration of that name —
    /// whose factory takes these arguments.
    static func derive<each Argument>(_ at: Derivation, arguments: repeat each Argument) throws -> Self
}

/// Where a derived service is being resolved: the resolution, the name asked for, and the depth.
struct Derivation {
    let resolution: Resolution
    let name: String?
    let depth: Int
}

extension Optional: DerivedService {
    /// `nil` when `Wrapped` has no registration (under that name and argument types); otherwise the resolved
    /// `Wrapped`, and any error raised while building it.
    static func derive<each Argument>(_ at: Derivation, arguments: repeat each Argument) throws -> Self {
        do {
            return try at.resolution.resolve(
                Wrapped.self, name: at.name, depth: at.depth, arguments: repeat each arguments)
        } catch {
            return try nilIfNotRegistered(
                error, ServiceKey(serviceType: Wrapped.self, name: at.name, argumentsType: (repeat each Argument).self))
        }
    }

    /// `nil` when `error` says that `key`, the wrapped service's, has no registration; otherwise the error, thrown.
    /// What both engines' derivation of an optional comes to when the wrapped resolve throws.
    static func nilIfNotRegistered(_ error: any Error, _ key: ServiceKey) throws -> Self {
        guard let error = error as? ResolutionError, case .notRegistered = error.reason,
            error.key == key || error.key == (Wrapped.self as? any DeferredResolving.Type)?.serviceKey(for: key)
        else {
            throw error
        }
        return nil
    }
}

/// A service Arbor derives from another registration in an `async` resolution, resolving that one asynchronously:
/// `Optional<T>`.
protocol AsyncDerivedService {
    static func deriveAsync(
        in resolution: Resolution, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Self
}

extension Optional: AsyncDerivedService {
    static func deriveAsync(
        in resolution: Resolution, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Self {
        let wrappedKey = ServiceKey(serviceType: Wrapped.self, name: key.name, argumentsType: key.argumentsType)
        do {
            let wrapped: Wrapped = try await resolution.resolveAsync(
                wrappedKey, found: resolution.find(wrappedKey, in: resolution.context), depth: depth,
                arguments: arguments)
            return wrapped
        } catch {
            return try nilIfNotRegistered(error, wrappedKey)
        }
    }
}
