/// A group of related registrations — a feature, a layer, a module — that an ``Assembler`` applies to a container.
///
/// ```swift
/// struct NetworkAssembly: Assembly {
///     func assemble(container: Container) {
///         container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
///         container.register(FeedAPI.self) { r in FeedAPI(client: try r.resolve()) }
///     }
///
///     func loaded(resolver: Resolver) {
///         // Optional: runs once every assembly of the batch has registered its services.
///     }
/// }
///
/// let assembler = Assembler([NetworkAssembly(), FeedAssembly()])
/// let api = try assembler.resolver.resolve(FeedAPI.self)
/// ```
///
/// An assembly only registers: it should not resolve in ``assemble(container:)``, because the assemblies applied
/// after it have not registered yet. Resolve what must exist at start-up in ``loaded(resolver:)``.
public protocol Assembly {
    /// Registers this assembly's services in `container`.
    ///
    /// ```swift
    /// func assemble(container: Container) {
    ///     container.register(Engine.self) { _ in V8() }
    /// }
    /// ```
    func assemble(container: Container)

    /// Called once, after every assembly applied in the same batch has been assembled, with the assembler's
    /// container. Resolve eagerly here, or check the configuration. Optional: the default does nothing.
    ///
    /// ```swift
    /// func loaded(resolver: Resolver) {
    ///     _ = try? resolver.resolve(Analytics.self)   // start analytics at launch
    /// }
    /// ```
    func loaded(resolver: any Resolver)
}

extension Assembly {
    /// Does nothing.
    public func loaded(resolver: any Resolver) {}
}
