/// A service Arbor builds from another registration when it has none of its own: `Optional<T>` from `T`
/// (and, with the same mechanism, wrappers such as `Lazy<T>`).
///
/// A registration of the derived type itself, such as `register(Engine?.self) { … }`, takes precedence.
protocol DerivedService {
    /// Builds the service within `resolution`, at `depth`, from the registration named `name` whose factory
    /// takes these arguments.
    static func derive<each Argument>(
        in resolution: Resolution,
        name: String?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Self
}

extension Optional: DerivedService {
    /// `nil` when `Wrapped` has no registration (under that name and argument types); otherwise the resolved
    /// `Wrapped`, and any error raised while building it.
    static func derive<each Argument>(
        in resolution: Resolution,
        name: String?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Self {
        do {
            return try resolution.resolve(Wrapped.self, name: name, depth: depth, arguments: repeat each arguments)
        } catch let error as ResolutionError {
            let wrappedKey = ServiceKey(
                serviceType: Wrapped.self, name: name, argumentsType: (repeat each Argument).self)
            guard case .notRegistered = error.reason, error.key == wrappedKey else { throw error }
            return nil
        }
    }
}
