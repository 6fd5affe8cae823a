extension Container {
    /// Runs `body`, and returns a profile of every resolve that started in this container or a descendant while it
    /// ran, on any thread or task: which registrations were built, how often, and where the time went.
    ///
    /// ```swift
    /// let profile = try container.profile {
    ///     _ = try container.resolve(AppModel.self)
    /// }
    /// print(profile)
    /// ```
    ///
    /// While it runs, the container has one more observer (``ResolutionObserver``): every resolve takes the general
    /// path and reads the clock for each instance it builds (<doc:SeeingWhatTheContainerDoes> has the figures). Resolves that
    /// are still running on other threads when `body` returns appear as far as they got. If `body` throws, the error
    /// is rethrown and no profile is made: to profile a resolve that fails, catch its error in `body`.
    public func profile(_ body: () throws -> Void) rethrows -> ResolutionProfile {
        let recorder = ProfileRecorder()
        addObserver(recorder)
        defer { removeObserver(recorder) }
        try body()
        return recorder.profile(duration: recorder.started.duration(to: .now))
    }

    /// Runs the `async` `body`, and returns a profile of every resolve that started in this container or a
    /// descendant while it ran, on any thread or task. See ``profile(_:)``.
    ///
    /// ```swift
    /// let profile = try await container.profile {
    ///     _ = try await container.resolve(AppModel.self)
    /// }
    /// ```
    public func profile(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Void
    ) async rethrows -> ResolutionProfile {
        let recorder = ProfileRecorder()
        addObserver(recorder)
        defer { removeObserver(recorder) }
        try await body()
        return recorder.profile(duration: recorder.started.duration(to: .now))
    }
}
