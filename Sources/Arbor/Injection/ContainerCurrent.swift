extension Container {
    /// The ambient container that ``Inject`` and ``LazyInject`` resolve from: a task-local value whose default is
    /// one process-wide root container.
    ///
    /// Register the app's services in it at start-up (outside any `withValue`, `current` is the root):
    ///
    /// ```swift
    /// Container.current.register(Engine.self) { _ in V8() }
    /// // or: Assembler([AppAssembly()], container: .current)
    /// ```
    ///
    /// A test swaps it for a child with overrides, for the duration of a closure — synchronous or `async` — and
    /// for every child task created inside it:
    ///
    /// ```swift
    /// let test = Container.current.makeChild()
    /// test.register(Engine.self) { _ in TestEngine() }
    /// Container.$current.withValue(test) {
    ///     let car = Car()            // its @Inject var engine: Engine is a TestEngine
    /// }
    /// ```
    ///
    /// Outside the closure, and in other tasks, `current` is what it was before. Being task-local, the value does
    /// not follow work onto threads that are not child tasks (a `Thread`, a `DispatchQueue`).
    ///
    /// To have the root register its services when it is first used, with no call at start-up, make `Container`
    /// conform to ``DependencyRegistering``.
    @TaskLocal public static var current: Container = makeDefaultRoot()

    /// The process-wide root of ``current``: registered by ``DependencyRegistering/registerDependencies()`` if the
    /// app made `Container` conform.
    private static func makeDefaultRoot() -> Container {
        let root = Container()
        (root as? any DependencyRegistering)?.registerDependencies()
        return root
    }
}

/// Registers the services of the process-wide root container, ``Container/current``'s default, the first time it is
/// used: an app that resolves only through ``Inject`` and ``LazyInject`` then needs no registration call in its
/// start-up code.
///
/// Make `Container` conform, once, in your app:
///
/// ```swift
/// extension Container: @retroactive DependencyRegistering {
///     public func registerDependencies() {
///         register(APIClient.self) { _ in URLSessionAPIClient() }.inObjectScope(.permanent)
///         register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
///     }
/// }
///
/// final class FeedScreen {
///     @Inject var model: FeedModel   // the first use of Container.current registers everything above
/// }
/// ```
///
/// (`@retroactive`: both `Container` and this protocol come from Arbor, and the conformance is the app's to declare.)
///
/// `registerDependencies()` runs once per process, on the root it is called on, when ``Container/current`` is first
/// read — before the first `@Inject` or `@LazyInject` resolves. Register into `self`: reading `Container.current`
/// inside it would ask for the root being made. Containers you make yourself are not affected; tests that swap in a
/// child with `Container.$current.withValue(_:operation:)` see the root's registrations, and their overrides.
public protocol DependencyRegistering {
    /// Registers the services of the process-wide root. Called once, on that root.
    func registerDependencies()
}
