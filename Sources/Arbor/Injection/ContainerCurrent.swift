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
    @TaskLocal public static var current: Container = Container()
}
