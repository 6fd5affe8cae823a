/// Where a property wrapper that resolves from ``Container/current`` was declared, and what it asked for: what its
/// failure message names, since a property wrapper cannot throw.
struct InjectionSite: Sendable {
    /// `@Inject` or `@LazyInject`.
    let wrapper: String
    /// What the wrapper resolves: type, name and argument types.
    let key: ServiceKey
    /// `#function` at the declaration: for a stored property, the type that declares it.
    let owner: StaticString
    let file: StaticString
    let line: UInt

    /// Returns what `resolve` returns, or stops the program with ``failureMessage(for:)``.
    func resolve<Service>(_ resolve: () throws -> Service) -> Service {
        do {
            return try resolve()
        } catch {
            fatalError(failureMessage(for: error), file: file, line: line)
        }
    }

    /// Reads like:
    ///
    /// ```text
    /// @Inject in Car (App/Car.swift:12) could not resolve Engine.
    /// Arbor could not resolve Engine: nothing is registered under that key.
    ///   path: Engine
    ///   …
    /// @Inject resolves from Container.current: …
    /// ```
    ///
    /// The last paragraph, for a service that is not registered, says where the wrapper looked: an app that
    /// registers in a container of its own, and tests that make `current` a child of it, pass their tests and stop
    /// in production.
    func failureMessage(for error: any Error) -> String {
        let owner = owner.description
        let place = owner.isEmpty ? "\(file):\(line)" : "\(owner) (\(file):\(line))"
        var message = "\(wrapper) in \(place) could not resolve \(key).\n\(error)"
        if let error = error as? ResolutionError, case .notRegistered = error.reason {
            message += """

                \(wrapper) resolves from Container.current: the process-wide root container, unless the task runs in \
                `Container.$current.withValue(container) { … }` (as ArborTesting's test containers do). Register \
                the service in that root, or make it the container your app registers in \
                (`static let shared = Container.current`).
                """
        }
        if let error = error as? ResolutionError, case .asyncRequired = error.reason {
            message += """

                \(wrapper) resolves synchronously, where it is read: it cannot `await`. Resolve the service with \
                `try await container.resolve(\(key.serviceType).self)` in async code and hand it over, or read \
                the property where a synchronous resolve can build it (on the main actor, for a @MainActor factory).
                """
        }
        return message
    }
}
