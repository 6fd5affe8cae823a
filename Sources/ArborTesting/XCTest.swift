#if canImport(XCTest)
import Arbor
import XCTest

/// Runs `body` with a new child of `container` and fails the test with `XCTFail`, showing the ``/Arbor/LeakReport``, if
/// anything the body resolved is still alive once it has returned. Returns what the body returns.
///
/// ```swift
/// final class FeedTests: XCTestCase {
///     func testClosingTheFeedReleasesIt() throws {
///         try assertNoLeaks(in: AppContainer.shared) { test in
///             test.register(HTTPClient.self) { _ in StubClient() }   // overrides stay in the child
///             let screen = try test.resolve(FeedScreen.self)
///             screen.close()
///         }
///     }
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
///   - file: The file the failure points at; the call site by default.
///   - line: The line the failure points at; the call site by default.
///   - report: What to do with a report that is not clean. By default it calls `XCTFail` with the report; pass
///     your own to collect reports instead, as a test of a test helper would.
///   - body: The code under test; it receives the child container.
@discardableResult
public func assertNoLeaks<Value>(
    in container: Container,
    file: StaticString = #filePath,
    line: UInt = #line,
    report: (LeakReport, StaticString, UInt) -> Void = { report, file, line in
        TestFailure.record("\(report)", file: file, line: line)
    },
    _ body: (Container) throws -> Value
) rethrows -> Value {
    let (value, leaks) = try ArborTesting.leakCheck(in: container, body)
    if !leaks.isClean { report(leaks, file, line) }
    return value
}

/// Runs the asynchronous `body` with a new child of `container` and fails the test with `XCTFail`, showing the
/// ``/Arbor/LeakReport``, if anything the body resolved is still alive once it has returned. Returns what the body returns.
///
/// ```swift
/// func testRefreshReleasesTheRequest() async throws {
///     try await assertNoLeaks(in: AppContainer.shared) { test in
///         try await test.resolve(FeedModel.self).refresh()
///     }
/// }
/// ```
///
/// See the synchronous form for the details. The body runs in the caller's isolation.
@discardableResult
public func assertNoLeaks<Value>(
    in container: Container,
    isolation: isolated (any Actor)? = #isolation,
    file: StaticString = #filePath,
    line: UInt = #line,
    report: (LeakReport, StaticString, UInt) -> Void = { report, file, line in
        TestFailure.record("\(report)", file: file, line: line)
    },
    _ body: (Container) async throws -> Value
) async rethrows -> Value {
    let (value, leaks) = try await ArborTesting.leakCheck(in: container, body)
    if !leaks.isClean { report(leaks, file, line) }
    return value
}
#endif
