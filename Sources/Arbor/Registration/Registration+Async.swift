extension Registration {
    /// Adds an `async` hook that runs once the instance has been built: ``initCompleted(_:)`` for wiring that needs
    /// `await`.
    ///
    /// ```swift
    /// container.register(Feed.self) { _ in Feed() }
    ///     .initCompleted { r, feed async throws in
    ///         await feed.attach(try await r.resolve(LiveUpdates.self))
    ///     }
    /// ```
    ///
    /// Hooks run in the same order whichever kind they are. A service with an `async` hook needs an `async` resolve
    /// (`try await`): a synchronous one throws ``ResolutionError/Reason/asyncRequired``.
    @discardableResult
    public func initCompleted(_ hook: @escaping @Sendable (any Resolver, Service) async throws -> Void) -> Registration
    {
        container.reconfigure(key, token: token, addingHook: InitHook(async: hook))
        return self
    }

    /// Adds an `async` hook that runs when the container drops an instance of this registration that it holds:
    /// ``onRelease(_:)`` for work that needs `await`, such as returning a connection to its pool or rolling a
    /// transaction back.
    ///
    /// ```swift
    /// container.register(UnitOfWork.self) { r in UnitOfWork(database: try r.resolve()) }
    ///     .inObjectScope(.perContainer)
    ///     .onRelease { work async in await work.rollBackIfOpen() }
    ///
    /// await request.closeAndWait()   // rolls back, then returns
    /// ```
    ///
    /// ``Container/closeAndWait()`` awaits these hooks, newest instance first, each once, in order with the
    /// synchronous ones. The synchronous ``Container/close()`` — and `resetObjectScope(_:)`, or a replaced
    /// registration — runs the synchronous hooks at once and starts the `async` ones in a task of their own, in the
    /// same order, without waiting for them.
    @discardableResult
    public func onRelease(_ hook: @escaping @Sendable (Service) async -> Void) -> Registration {
        container.reconfigure(key, token: token, addingReleaseHook: ReleaseHook(async: hook))
        return self
    }
}
