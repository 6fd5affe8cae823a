extension Container {
    /// Adds an observer that sees every resolve that starts in this container or a descendant — children made later
    /// included — and every instance they release, until ``removeObserver(_:)``.
    ///
    /// ```swift
    /// let slow = SlowFactories()
    /// container.addObserver(slow)
    /// _ = try container.resolve(AppModel.self)   // slow.instanceBuilt(_:) sees each factory
    /// container.removeObserver(slow)
    /// ```
    ///
    /// The container holds the observer strongly. Adding one that is already there does nothing. A resolve already
    /// running keeps the observers it started with: the change applies from the next top-level resolve.
    public func addObserver(_ observer: any ResolutionObserver) {
        changeObservers(adding: observer, removing: nil)
    }

    /// Removes an observer added with ``addObserver(_:)``, here and in every descendant. Removing one that is not
    /// there does nothing.
    public func removeObserver(_ observer: any ResolutionObserver) {
        changeObservers(adding: nil, removing: observer)
    }

    /// The observers that see this container's resolves: those added to it and to its ancestors, oldest first.
    public var observers: [any ResolutionObserver] {
        registry.withLock { $0.diagnostics?.observers ?? [] }
    }
}
