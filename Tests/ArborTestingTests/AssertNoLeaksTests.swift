import Arbor
import ArborTesting
import Testing  // for `expectNoLeaks`, called from an XCTest test below
import XCTest

// `assertNoLeaks` with XCTest: a leaking body fails the test with the report, a clean body passes.
//
// XCTest on Linux has no expected-failure API, so this test case catches the failures that `XCTFail` records while
// `capturing` is on, and lets every other failure through; a capturing reporter shows the report itself.

final class AssertNoLeaksTests: XCTestCase {
    private struct Failure {
        let description: String
        let file: String
        let line: Int
    }

    private var capturing = false
    private var failures: [Failure] = []

    /// Runs `body` and returns the failures it recorded instead of failing this test.
    private func failuresRecorded(by body: () throws -> Void) rethrows -> [Failure] {
        capturing = true
        defer { capturing = false }
        failures = []
        try body()
        return failures
    }

    private func failuresRecorded(by body: () async throws -> Void) async rethrows -> [Failure] {
        capturing = true
        defer { capturing = false }
        failures = []
        try await body()
        return failures
    }

    #if canImport(Darwin)
    override func record(_ issue: XCTIssue) {
        guard capturing else { return super.record(issue) }
        let location = issue.sourceCodeContext.location
        failures.append(
            Failure(
                description: issue.compactDescription, file: location?.fileURL.path ?? "",
                line: location?.lineNumber ?? 0))
    }
    #else
    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        guard capturing else {
            return super.recordFailure(
                withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
        failures.append(Failure(description: description, file: filePath, line: lineNumber))
    }
    #endif

    // MARK: The default reporter fails the test

    func testLeakingBodyFailsWithTheReport() throws {
        var leaked = WeakBox<LeakyView>(nil)
        var expectedLine = 0

        let failures = try failuresRecorded {
            expectedLine = #line + 1
            try assertNoLeaks(in: Shop.shared) { test in
                leaked.object = try test.resolve(LeakyView.self)
            }
        }

        XCTAssertEqual(failures.count, 1)
        let failure = try XCTUnwrap(failures.first)
        XCTAssertTrue(failure.description.contains("LeakyPresenter.view → LeakyView"), failure.description)
        XCTAssertTrue(failure.description.contains("LeakyView.presenter → LeakyPresenter"), failure.description)
        XCTAssertTrue(failure.file.hasSuffix("AssertNoLeaksTests.swift"), failure.file)
        XCTAssertEqual(failure.line, expectedLine)
        Shop.release(leaked.object)
        XCTAssertNil(leaked.object)
    }

    /// Swift Testing's `expectNoLeaks`, called by mistake in an XCTest test, fails the XCTest test: an issue it
    /// recorded would go unseen, and the test pass.
    func testExpectNoLeaksInAnXCTestFailsTheXCTest() throws {
        var leaked = WeakBox<LeakyView>(nil)
        var line = 0

        let failures = try failuresRecorded {
            line = #line + 1
            try expectNoLeaks(in: Shop.shared) { test in
                leaked.object = try test.resolve(LeakyView.self)
            }
        }

        XCTAssertEqual(failures.count, 1)
        let failure = try XCTUnwrap(failures.first)
        XCTAssertTrue(failure.description.contains("LeakyView.presenter → LeakyPresenter"), failure.description)
        XCTAssertTrue(failure.description.contains("/AssertNoLeaksTests.swift:\(line))"), failure.description)
        Shop.release(leaked.object)
    }

    func testCleanBodyPassesAndReturnsItsValue() throws {
        var total = 0

        let failures = try failuresRecorded {
            total = try assertNoLeaks(in: Shop.shared) { test in
                let view = try test.resolve(CheckoutView.self)
                XCTAssertTrue(view.presenter.view === view)
                view.presenter.cart.items = ["tea"]
                return view.presenter.cart.total
            }
        }

        XCTAssertEqual(failures.count, 0)
        XCTAssertEqual(total, 300)
    }

    func testAsyncLeakingBodyFails() async throws {
        var leaked = WeakBox<LeakyView>(nil)

        let failures = try await failuresRecorded {
            try await assertNoLeaks(in: Shop.shared) { test in
                await Task.yield()
                leaked.object = try await test.resolve(LeakyView.self)
            }
        }

        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures.first?.description.contains("LeakyView.presenter → LeakyPresenter") == true)
        Shop.release(leaked.object)
    }

    func testAsyncCleanBodyPasses() async throws {
        let failures = try await failuresRecorded {
            let items = try await assertNoLeaks(in: Shop.shared) { test in
                await Task.yield()
                let cart = try await test.resolve(Cart.self)
                cart.items = ["milk"]
                return cart.items
            }
            XCTAssertEqual(items, ["milk"])
        }

        XCTAssertEqual(failures.count, 0)
    }

    // MARK: An injected reporter

    func testInjectedReporterReceivesTheReportAndTheCallSite() throws {
        let reports = Reports<(file: String, line: UInt)>()
        var leaked = WeakBox<LeakyView>(nil)

        let expectedLine = UInt(#line + 1)
        try assertNoLeaks(in: Shop.shared, report: { reports.append($0, ("\($1)", $2)) }) { test in
            leaked.object = try test.resolve(LeakyView.self)
        }

        XCTAssertEqual(reports.all.count, 1)
        XCTAssertEqual(reports.all.first?.report.leaks.map(\.typeName).sorted(), ["LeakyPresenter", "LeakyView"])
        XCTAssertEqual(reports.all.first?.location.line, expectedLine)
        XCTAssertTrue(reports.all.first?.location.file.hasSuffix("AssertNoLeaksTests.swift") == true)
        Shop.release(leaked.object)
    }

    func testThrowingBodyPropagatesItsErrorAndIsNotChecked() {
        let reports = Reports<UInt>()
        var leaked = WeakBox<LeakyView>(nil)

        XCTAssertThrowsError(
            try assertNoLeaks(in: Shop.shared, report: { reports.append($0, $2) }) { test in
                leaked.object = try test.resolve(LeakyView.self)
                throw Boom()
            }
        ) { error in
            XCTAssertTrue(error is Boom)
        }

        XCTAssertEqual(reports.all.count, 0)
        Shop.release(leaked.object)
    }

    func testOverridesStayInTheChild() throws {
        let app = Shop.makeContainer()

        let prices = assertNoLeaks(in: app) { test in
            XCTAssertTrue(test.parent === app)
            XCTAssertTrue(ArborTesting.current === test)
            XCTAssertTrue(Container.current === test)
            test.register((any PriceService).self) { _ in StubPrices() }
            return Basket().cart.prices is StubPrices  // @Inject resolves from the child
        }

        XCTAssertTrue(prices)
        XCTAssertTrue(try app.resolve(Cart.self).prices is LivePrices)
        XCTAssertNil(ArborTesting.current)
    }
}
