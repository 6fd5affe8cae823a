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

extension Registration where Service: Sendable {
    /// Adds a hook isolated to the main actor: ``initCompleted(_:)`` for a `@MainActor` object, such as a view model
    /// whose back reference is set once the graph is built.
    ///
    /// ```swift
    /// container.register(FeedViewModel.self) { @MainActor r in FeedViewModel(client: try r.resolve()) }
    ///     .initCompleted { @MainActor r, model in model.coordinator = try r.resolve(AppCoordinator.self) }
    ///
    /// @MainActor func showFeed() throws {
    ///     let model = try container.resolve(FeedViewModel.self)        // factory and hook run here
    /// }
    /// func prefetch() async throws {
    ///     let model = try await container.resolve(FeedViewModel.self)  // goes to the main actor for each
    /// }
    /// ```
    ///
    /// Resolved synchronously on the main actor, the hook runs there, in order with the others; resolved with
    /// `try await` from anywhere, Arbor goes to the main actor to run it. Resolved synchronously anywhere else, the
    /// resolve throws ``ResolutionError/Reason/asyncRequired`` saying so: never a crash, never a data race, which
    /// `MainActor.assumeIsolated` in a hook that is not isolated would risk. The service is `Sendable` (a
    /// `@MainActor` class is), since the hook gets it on the main actor.
    @discardableResult
    public func initCompleted(
        _ hook: @escaping @MainActor @Sendable (any Resolver, Service) throws -> Void
    ) -> Registration {
        container.reconfigure(key, token: token, addingHook: InitHook(mainActor: hook))
        return self
    }
}
