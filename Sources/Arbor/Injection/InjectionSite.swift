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
    /// ```
    func failureMessage(for error: any Error) -> String {
        let owner = owner.description
        let place = owner.isEmpty ? "\(file):\(line)" : "\(owner) (\(file):\(line))"
        return "\(wrapper) in \(place) could not resolve \(key).\n\(error)"
    }
}
