import Arbor

/// Helpers for testing code that uses Arbor: child containers for a test's overrides, and leak checks.
///
/// With Swift Testing, give a test its own child container, and fail it when something it resolved outlives it:
///
/// ```swift
/// import ArborTesting
/// import Testing
///
/// @Test(.childContainer(of: AppContainer.shared, checkingLeaks: true) { test in
///     test.register(HTTPClient.self) { _ in StubClient() }
/// })
/// func feedShowsHeadlines() throws {
///     let feed = try ArborTesting.container.resolve(FeedModel.self)   // built with StubClient
///     #expect(feed.headlines == ["(stub)"])
/// }
///
/// @Test func screenIsReleased() throws {
///     try expectNoLeaks(in: AppContainer.shared) { test in
///         let screen = try test.resolve(FeedScreen.self)
///         screen.show()
///     }   // fails the test, with a LeakReport, if the screen or anything it resolved is still alive
/// }
/// ```
///
/// With XCTest, `assertNoLeaks(in:) { test in … }` does the same with `XCTFail`. Without either framework,
/// ``leakCheck(in:_:)`` runs the body and hands back the report.
public enum ArborTesting {
    /// Makes a child of `container` for one test, and lets `overrides` register the test's replacements in it.
    ///
    /// ```swift
    /// let test = ArborTesting.overriding(appContainer) { child in
    ///     child.register(HTTPClient.self) { _ in StubClient() }
    /// }
    /// ```
    ///
    /// The child sees every registration of `container` and hides those that `overrides` registers again,
    /// so the test's stubs reach every transient and graph-scoped service it resolves from the child, while
    /// `container` itself and its permanent instances stay untouched.
    public static func overriding(
        _ container: Container,
        _ overrides: (Container) throws -> Void
    ) rethrows -> Container {
        let child = overriding(container)
        try overrides(child)
        return child
    }

    /// Makes a child of `container` for one test, for overrides the test registers later, or for none: a root of
    /// the test's own, which the test may close or hand to an app that ends it (Vapor's `useRequestContainers`
    /// closes the root it is given when the app shuts down).
    ///
    /// ```swift
    /// let test = ArborTesting.overriding(appContainer)
    /// app.useRequestContainers(root: test)   // the shared container stays open for the next test
    /// ```
    public static func overriding(_ container: Container) -> Container {
        container.makeChild()
    }

    // MARK: The test's container

    /// The container of the running test, or `nil` outside one: the child that the `.childContainer(of:)` trait,
    /// ``expectNoLeaks(in:sourceLocation:report:_:)`` or ``assertNoLeaks(in:file:line:report:_:)`` made for it.
    ///
    /// It is a task-local value, so it follows the test into the tasks it starts (`async let`, task groups) and
    /// stays `nil` for tests running in parallel beside it. Wherever it is set, `Container.current` is set to the
    /// same container, so `@Inject` and `@LazyInject` in the code under test resolve from the test's child too.
    /// Bind one yourself with ``withContainer(_:_:)``.
    @TaskLocal public static var current: Container?

    /// The container of the running test: ``current``, for code that knows it runs inside one.
    ///
    /// ```swift
    /// @Test(.childContainer(of: AppContainer.shared))
    /// func checkout() throws {
    ///     let cart = try ArborTesting.container.resolve(Cart.self)
    ///     #expect(cart.items.isEmpty)
    /// }
    /// ```
    ///
    /// Reading it outside a test that has a child container stops the program with a message saying how to give
    /// the test one; use ``current`` where there may be none.
    public static var container: Container {
        guard let current else {
            fatalError(
                """
                ArborTesting.container was read outside a test that has a child container. Give the test one with \
                @Test(.childContainer(of: yourContainer)), or run the code inside expectNoLeaks(in:) / \
                assertNoLeaks(in:) or ArborTesting.withContainer(container) { … }. If the test has one, this code \
                runs where task-local values do not follow: in a Task.detached, a Thread or a DispatchQueue. Read \
                the container before, and hand it over.
                """)
        }
        return current
    }

    /// Runs `body` with `container` as the test's container: both ``current`` and `Container.current`, which
    /// `@Inject` and `@LazyInject` resolve from. Returns what the body returns.
    ///
    /// ```swift
    /// func testCheckoutUsesTheStub() throws {
    ///     let test = ArborTesting.overriding(AppContainer.shared) { $0.register(Payments.self) { _ in StubPayments() } }
    ///     try ArborTesting.withContainer(test) {
    ///         let model = CheckoutModel()       // its @Inject var payments: Payments is a StubPayments
    ///         XCTAssertTrue(try model.pay(10))
    ///     }
    /// }
    /// ```
    ///
    /// Both values are task-local: they follow the body into the child tasks it starts, and are restored when it
    /// returns. The `.childContainer(of:)` trait and the leak assertions do this for you.
    public static func withContainer<Value>(
        _ container: Container,
        _ body: () throws -> Value
    ) rethrows -> Value {
        try $current.withValue(container) {
            try Container.$current.withValue(container) { try body() }
        }
    }

    /// Runs the asynchronous `body` with `container` as the test's container: both ``current`` and
    /// `Container.current`. Returns what the body returns.
    ///
    /// ```swift
    /// try await ArborTesting.withContainer(test) {
    ///     try await CheckoutModel().pay(10)
    /// }
    /// ```
    public static func withContainer<Value>(
        _ container: Container,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Value
    ) async rethrows -> Value {
        try await $current.withValue(container) {
            try await Container.$current.withValue(container) { try await body() }
        }
    }

    // MARK: Leak checks

    /// Runs `body` with a new child of `container`, then reports which instances resolved from that child (or its
    /// descendants) during the body are still alive.
    ///
    /// ```swift
    /// let (title, report) = try ArborTesting.leakCheck(in: app) { test in
    ///     try test.resolve(FeedScreen.self).title
    /// }
    /// print(report.isClean ? "\(title): no leaks" : "\(report)")
    /// ```
    ///
    /// This is what the framework assertions build on; use it to inspect the report yourself. The body's
    /// references are gone by the time the check runs, except what it returns: return plain values, because a
    /// resolved object that the body returns outlives it, and is reported. Instances an ancestor's permanent
    /// registrations keep, and what they were built with, are not leaks (``/Arbor/LeakTracker/check()`` lists what
    /// is not). While the body runs, the child is ``current`` and `Container.current`. If
    /// the body throws, the error propagates and nothing is checked.
    ///
    /// The child is closed when the body returns, before the check, as a test's container ends with the test: what
    /// it kept — its per-container instances, and the permanent ones of registrations made in it — is released,
    /// its release hooks run, and an instance still alive after that is reported.
    ///
    /// Resolve through the container the body receives: resolutions started in `container` itself are not
    /// watched, so that tests running in parallel do not see each other's instances.
    public static func leakCheck<Value>(
        in container: Container,
        _ body: (Container) throws -> Value
    ) rethrows -> (value: Value, report: LeakReport) {
        let child = container.makeChild()
        let tracker = LeakTracker(child)
        let value: Value
        do {
            value = try withContainer(child) { try body(child) }
        } catch {
            child.close()
            throw error
        }
        child.close()
        return (value, tracker.check())
    }

    /// Runs `body` with a new child of `container`, then reports which instances resolved from that child (or its
    /// descendants) during the body are still alive. The asynchronous form of ``leakCheck(in:_:)``: it closes the
    /// child with `closeAndWait()`, so `async` release hooks have finished before the check.
    ///
    /// ```swift
    /// let (_, report) = try await ArborTesting.leakCheck(in: app) { test in
    ///     try await test.resolve(FeedModel.self).refresh()
    /// }
    /// ```
    public static func leakCheck<Value>(
        in container: Container,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Container) async throws -> Value
    ) async rethrows -> (value: Value, report: LeakReport) {
        let (value, tracker) = try await inChild(of: container, watchedBy: LeakTracker.init, body)
        return (value, tracker.check())
    }

    /// Runs `body` with a new child of `container` as the test's container, and closes the child with
    /// `closeAndWait()` when the body returns or throws. `watch` is called with the child before the body runs (to
    /// start a ``/Arbor/LeakTracker``, say); what it returned comes back with the body's value.
    static func inChild<Value, Watcher>(
        of container: Container,
        watchedBy watch: (Container) -> Watcher,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Container) async throws -> Value
    ) async rethrows -> (value: Value, watcher: Watcher) {
        let child = container.makeChild()
        let watcher = watch(child)
        let value: Value
        do {
            value = try await withContainer(child) { try await body(child) }
        } catch {
            await child.closeAndWait()
            throw error
        }
        await child.closeAndWait()
        return (value, watcher)
    }
}
