#if canImport(Testing)
import Arbor
import Testing

// MARK: - expectNoLeaks

/// Runs `body` with a new child of `container` and records an issue, with the ``/Arbor/LeakReport``, if anything the body
/// resolved is still alive once it has returned. Returns what the body returns.
///
/// ```swift
/// @Test func closingTheFeedReleasesIt() throws {
///     try expectNoLeaks(in: AppContainer.shared) { test in
///         test.register(HTTPClient.self) { _ in StubClient() }   // overrides stay in the child
///         let screen = try test.resolve(FeedScreen.self)
///         screen.close()
///     }
/// }
///
/// @Test func headlines() throws {
///     let titles = try expectNoLeaks(in: AppContainer.shared) { test in
///         try test.resolve(FeedModel.self).headlines   // plain values are fine to return
///     }
///     #expect(titles.count == 2)
/// }
/// ```
///
/// The child keeps the test's overrides away from `container`; resolve through it, since resolutions started in
/// `container` itself are not watched. The body's references are gone when the check runs — a resolved object that the
/// body *returns* outlives it and is reported. Instances that an ancestor's permanent registration keeps, what they
/// were built with, and an ancestor's weak instances that others hold are not leaks; the child is closed before the
/// check, so what it kept (its per-container instances) is released first, and reported if still alive. While the body
/// runs, the child is ``ArborTesting/current`` and `Container.current` (so `@Inject` resolves from it). If the body
/// throws, the error propagates and nothing is checked.
///
/// - Parameters:
///   - container: The container to make the test's child of: usually the app's.
///   - sourceLocation: Where the issue points; the call site by default.
///   - report: What to do with a report that is not clean. By default it records an issue with the report as
///     its comment; pass your own to collect reports instead, as a test of a test helper would.
///   - body: The code under test; it receives the child container.
@discardableResult
public func expectNoLeaks<Value>(
    in container: Container,
    sourceLocation: SourceLocation = #_sourceLocation,
    report: (LeakReport, SourceLocation) -> Void = { report, location in
        TestFailure.record("\(report)", at: location)
    },
    _ body: (Container) throws -> Value
) rethrows -> Value {
    let (value, leaks) = try ArborTesting.leakCheck(in: container, body)
    if !leaks.isClean { report(leaks, sourceLocation) }
    return value
}

/// Runs the asynchronous `body` with a new child of `container` and records an issue, with the ``/Arbor/LeakReport``, if
/// anything the body resolved is still alive once it has returned. Returns what the body returns.
///
/// ```swift
/// @Test func refreshReleasesTheRequest() async throws {
///     try await expectNoLeaks(in: AppContainer.shared) { test in
///         try await test.resolve(FeedModel.self).refresh()
///     }
/// }
/// ```
///
/// See the synchronous form for the details. The body runs in the caller's isolation (on the main actor in a
/// `@MainActor` test).
@discardableResult
public func expectNoLeaks<Value>(
    in container: Container,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    report: (LeakReport, SourceLocation) -> Void = { report, location in
        TestFailure.record("\(report)", at: location)
    },
    _ body: (Container) async throws -> Value
) async rethrows -> Value {
    let (value, leaks) = try await ArborTesting.leakCheck(in: container, body)
    if !leaks.isClean { report(leaks, sourceLocation) }
    return value
}

// MARK: - The child-container trait

// Custom traits that wrap a test (`TestScoping`) arrived with Swift 6.1.
#if compiler(>=6.1)

/// A trait that gives each test its own child of a container, as ``ArborTesting/container`` and `Container.current`,
/// and optionally fails the test when something it resolved outlives it.
///
/// ```swift
/// @Test(.childContainer(of: AppContainer.shared) { test in
///     test.register(HTTPClient.self) { _ in StubClient() }
/// })
/// func feedUsesTheStub() throws {
///     let feed = try ArborTesting.container.resolve(FeedModel.self)
///     #expect(feed.headlines == ["(stub)"])
/// }
///
/// @Suite(.childContainer(of: AppContainer.shared, checkingLeaks: true))
/// struct CheckoutTests { … }    // every test in the suite gets a fresh child, and a leak check
/// ```
///
/// Make one with ``ChildContainerTrait/childContainer(of:checkingLeaks:overrides:)``. On a suite, it applies to each test of the
/// suite (and of nested suites), and to each case of a parameterized test, separately.
public struct ChildContainerTrait: TestTrait, SuiteTrait, TestScoping {
    /// The container each test gets a child of.
    public let parent: Container
    /// Whether the test fails when something it resolved from its child is still alive after it returns.
    public let checksLeaks: Bool
    private let overrides: @Sendable (Container) throws -> Void
    private let report: @Sendable (LeakReport, SourceLocation) -> Void

    /// Makes the trait; ``ChildContainerTrait/childContainer(of:checkingLeaks:overrides:)`` reads better in an attribute.
    ///
    /// - Parameters:
    ///   - parent: The container each test gets a child of.
    ///   - checksLeaks: Whether the test fails when something it resolved from its child outlives it.
    ///   - overrides: Registers the test's replacements in each child before the test runs.
    ///   - report: What to do with a report that is not clean; by default it records an issue at the test.
    public init(
        parent: Container,
        checksLeaks: Bool = false,
        overrides: @escaping @Sendable (Container) throws -> Void = { _ in },
        report: @escaping @Sendable (LeakReport, SourceLocation) -> Void = { report, location in
            Issue.record("\(report)", sourceLocation: location)
        }
    ) {
        self.parent = parent
        self.checksLeaks = checksLeaks
        self.overrides = overrides
        self.report = report
    }

    /// A suite's trait applies to each of its tests.
    public var isRecursive: Bool { true }

    /// Runs one test (or one case of a parameterized test) with a new child as ``ArborTesting/current`` and
    /// `Container.current`, after registering the overrides in it; closes the child when the test ends (with
    /// `closeAndWait()`, so its `async` release hooks have run); and, if ``checksLeaks``, then checks for leaks.
    ///
    /// The child is a child of ``parent`` — or, when the test already has a container that descends from ``parent``
    /// (a suite's trait, and a test's own), of that one, so the test gets both traits' overrides, its own last, and
    /// the outer trait's leak check covers it too.
    ///
    /// A test that throws is not checked: its error is the failure to fix first.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let parent = enclosingContainer ?? self.parent
        let watch = { (child: Container) in checksLeaks ? LeakTracker(child) : nil }
        let (_, tracker) = try await ArborTesting.inChild(of: parent, watchedBy: watch) { child in
            try overrides(child)
            try await function()
        }
        if let leaks = tracker?.check(), !leaks.isClean { report(leaks, test.sourceLocation) }
    }

    /// The test's container already, if it descends from ``parent``: an enclosing trait's child.
    private var enclosingContainer: Container? {
        guard let current = ArborTesting.current else { return nil }
        return sequence(first: current, next: \.parent).contains { $0 === parent } ? current : nil
    }
}

extension Trait where Self == ChildContainerTrait {
    /// Gives each test its own child of `container`, as ``ArborTesting/container`` and `Container.current` (which
    /// `@Inject` and `@LazyInject` resolve from), with the test's overrides registered in it.
    ///
    /// ```swift
    /// @Test(.childContainer(of: AppContainer.shared) { test in
    ///     test.register(Clock.self) { _ in FixedClock(.noon) }
    /// })
    /// func greetingAtNoon() throws {
    ///     #expect(try ArborTesting.container.resolve(Greeter.self).greeting == "Good afternoon")
    /// }
    ///
    /// @Test(.childContainer(of: AppContainer.shared, checkingLeaks: true))
    /// func screenIsReleased() throws {
    ///     _ = try ArborTesting.container.resolve(FeedScreen.self)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - container: The container to make each test's child of; it and its permanent instances stay untouched.
    ///   - checkingLeaks: Whether to fail the test, with a ``/Arbor/LeakReport``, when an instance it resolved from its
    ///     child is still alive after the test returns and the child has been closed (an ancestor's permanent
    ///     instances are not leaks). Suite and test properties live as long as the test does, so keep resolved
    ///     objects in local variables.
    ///   - overrides: Registers the test's replacements in the child, before the test runs.
    public static func childContainer(
        of container: Container,
        checkingLeaks: Bool = false,
        overrides: @escaping @Sendable (Container) throws -> Void = { _ in }
    ) -> Self {
        ChildContainerTrait(parent: container, checksLeaks: checkingLeaks, overrides: overrides)
    }
}
#endif  // compiler(>=6.1)
#endif
