import Arbor
import ArborTesting
import Testing

// `expectNoLeaks` and `ArborTesting.leakCheck`: a leaking body fails the test with the report, a clean body passes.
// A capturing reporter shows what *would* fail; `withKnownIssue` shows that the default reporter does fail a test.

@Suite struct ExpectNoLeaksTests {
    // MARK: Leaking and clean bodies, with a capturing reporter

    @Test func leakingBodyIsReportedWithTheReport() throws {
        let reports = Reports<SourceLocation>()
        var leaked = WeakBox<LeakyView>(nil)

        let expectedLine = #line + 1
        try expectNoLeaks(in: Shop.shared, report: reports.append) { test in
            leaked.object = try test.resolve(LeakyView.self)
        }

        try #require(reports.all.count == 1)
        let (report, location) = reports.all[0]
        #expect(report.leaks.map(\.typeName).sorted() == ["LeakyPresenter", "LeakyView"])
        #expect(report.description.contains("LeakyPresenter.view → LeakyView"))
        #expect(report.description.contains("LeakyView.presenter → LeakyPresenter"))
        #expect(location.line == expectedLine, "the issue points at the call")
        #expect(location.fileName == "ExpectNoLeaksTests.swift")
        Shop.release(leaked.object)
        #expect(leaked.object == nil)
    }

    @Test func cleanBodyIsNotReportedAndItsValueIsReturned() throws {
        let reports = Reports<SourceLocation>()

        let total = try expectNoLeaks(in: Shop.shared, report: reports.append) { test in
            let view = try test.resolve(CheckoutView.self)
            #expect(view.presenter.view === view)
            view.presenter.cart.items = ["tea", "milk"]
            return view.presenter.cart.total
        }

        #expect(reports.all.isEmpty)
        #expect(total == 700)
    }

    @Test func sourceLocationCanBePassedOn() throws {
        let reports = Reports<SourceLocation>()
        var leaked = WeakBox<LeakyView>(nil)
        let location = SourceLocation(fileID: "App/Helpers.swift", filePath: "/App/Helpers.swift", line: 7, column: 3)

        try expectNoLeaks(in: Shop.shared, sourceLocation: location, report: reports.append) { test in
            leaked.object = try test.resolve(LeakyView.self)
        }

        #expect(reports.all.map(\.location) == [location])
        Shop.release(leaked.object)
    }

    // MARK: The default reporter records an issue

    @Test func leakingBodyFailsTheTestByDefault() throws {
        var leaked = WeakBox<LeakyView>(nil)

        try withKnownIssue {
            try expectNoLeaks(in: Shop.shared) { test in
                leaked.object = try test.resolve(LeakyView.self)
            }
        } matching: { issue in
            let comment = issue.comments.map(\.rawValue).joined()
            return comment.contains("LeakyPresenter.view → LeakyView")
                && comment.contains("LeakyView.presenter → LeakyPresenter")
                && issue.sourceLocation?.fileName == "ExpectNoLeaksTests.swift"
        }

        Shop.release(leaked.object)
    }

    /// XCTest's `assertNoLeaks`, called by mistake in a Swift Testing test, records an issue at the call: an
    /// `XCTFail` would go unseen, and the test pass.
    @Test func assertNoLeaksInASwiftTestingTestRecordsAnIssue() throws {
        var leaked = WeakBox<LeakyView>(nil)
        let line = #line + 3

        try withKnownIssue {
            try assertNoLeaks(in: Shop.shared) { test in
                leaked.object = try test.resolve(LeakyView.self)
            }
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("LeakyView.presenter → LeakyPresenter")
                && issue.sourceLocation?.fileName == "ExpectNoLeaksTests.swift" && issue.sourceLocation?.line == line
        }

        Shop.release(leaked.object)
    }

    /// A check called off the test's task (a detached task here) cannot reach the test: its failure is printed to
    /// standard error, saying so, rather than passing unseen.
    @Test func aCheckOffTheTestsTaskPrintsItsFailure() async throws {
        let printed = try await capturingStandardError {
            await Task.detached {
                var leaked = WeakBox<LeakyView>(nil)
                try? expectNoLeaks(in: Shop.shared) { test in leaked.object = try test.resolve(LeakyView.self) }
                Shop.release(leaked.object)
            }.value
        }
        #expect(printed.contains("ArborTesting: a check failed outside a Swift Testing test's task"))
        #expect(printed.contains("LeakyView.presenter → LeakyPresenter"))
    }

    @Test func cleanBodyPassesByDefault() throws {
        // Would record an issue, and fail this test, if the default reporter fired.
        let wired = try expectNoLeaks(in: Shop.shared) { test in
            let view = try test.resolve(CheckoutView.self)
            return view.presenter.view === view
        }
        #expect(wired)
    }

    // MARK: What counts

    @Test func permanentInstancesAreNotLeaks() throws {
        let reports = Reports<SourceLocation>()

        try expectNoLeaks(in: Shop.shared, report: reports.append) { test in
            test.register(Cart.self) { r in Cart(prices: try r.resolve()) }.inObjectScope(.permanent)
            _ = try test.resolve(Cart.self)  // kept by the child's permanent registration
            _ = try test.resolve((any PriceService).self)  // kept by the app's
        }

        #expect(reports.all.isEmpty)
    }

    @Test func aResolvedObjectThatTheBodyReturnsOutlivesItAndIsReported() throws {
        let reports = Reports<SourceLocation>()

        let cart = try expectNoLeaks(in: Shop.shared, report: reports.append) { test in
            try test.resolve(Cart.self)
        }

        #expect(reports.all.map { $0.report.leaks.map(\.typeName) } == [["Cart"]])
        withExtendedLifetime(cart) {}
    }

    @Test func objectKeptByTheTestOutsideTheBodyIsReported() throws {
        let reports = Reports<SourceLocation>()
        var kept: Cart?

        try expectNoLeaks(in: Shop.shared, report: reports.append) { test in
            kept = try test.resolve(Cart.self)
        }

        #expect(reports.all.first?.report.leaks.first?.typeName == "Cart")
        #expect(kept != nil)
    }

    /// The test's child ends before the check: a per-container instance it kept is released, and reported if the
    /// test still holds it.
    @Test func aPerContainerInstanceKeptPastTheBodyIsReportedAfterItsRelease() throws {
        let app = Shop.makeContainer()
        let releases = ReleaseRecorder()
        app.register(Connection.self) { _ in Connection() }.inObjectScope(.perContainer)
            .recordingReleases(in: releases)
        let reports = Reports<SourceLocation>()
        var kept: Connection?

        try expectNoLeaks(in: app, report: reports.append) { test in
            kept = try test.resolve(Connection.self)
        }

        #expect(reports.all.map { $0.report.leaks.map(\.typeName) } == [["Connection"]])
        #expect(releases.released == ["Connection"])
        #expect(kept != nil)
    }

    @Test func aPerContainerInstanceTheBodyLetGoIsReleasedAndNotALeak() async throws {
        let app = Shop.makeContainer()
        let releases = ReleaseRecorder()
        let rolledBack = Locked(false)
        app.register(Connection.self) { _ in Connection() }.inObjectScope(.perContainer)
            .onRelease { _ async in
                await Task.yield()
                rolledBack.value = true
            }
            .recordingReleases(in: releases)

        let (_, report) = try await ArborTesting.leakCheck(in: app) { test in
            _ = try await test.resolve(Connection.self)
        }

        #expect(report.isClean, "\(report)")
        #expect(report.trackedCount == 1)
        #expect(releases.released == ["Connection"])
        #expect(rolledBack.value, "the async form awaits the child's async release hooks before it checks")
    }

    @Test func throwingBodyPropagatesItsErrorAndIsNotChecked() throws {
        let reports = Reports<SourceLocation>()
        var leaked = WeakBox<LeakyView>(nil)

        #expect(throws: Boom.self) {
            try expectNoLeaks(in: Shop.shared, report: reports.append) { test in
                leaked.object = try test.resolve(LeakyView.self)
                throw Boom()
            }
        }

        #expect(reports.all.isEmpty)
        #expect(leaked.object != nil)
        Shop.release(leaked.object)
    }

    // MARK: The child container

    @Test func bodyGetsAChildWhoseOverridesStayOutOfTheAppContainer() throws {
        let app = Shop.makeContainer()
        let appPrices = try app.resolve((any PriceService).self)

        let total = try expectNoLeaks(in: app) { test in
            #expect(test.parent === app)
            #expect(ArborTesting.current === test)
            #expect(ArborTesting.container === test)
            test.register((any PriceService).self) { _ in StubPrices() }
            let cart = try test.resolve(Cart.self)
            cart.items = ["tea", "milk"]
            return cart.total
        }

        #expect(total == 2, "the cart was built with the stub")
        #expect(try app.resolve(Cart.self).prices === appPrices, "the app still builds carts with its own service")
        #expect(ArborTesting.current == nil)
    }

    @Test func injectInTheCodeUnderTestResolvesFromTheChild() throws {
        let outside = Container.current

        let total = expectNoLeaks(in: Shop.shared) { test in
            #expect(Container.current === test)
            test.register((any PriceService).self) { _ in StubPrices() }
            let basket = Basket()  // @Inject var cart: Cart, resolved from Container.current
            basket.cart.items = ["tea", "milk"]
            return basket.cart.total
        }

        #expect(total == 2, "the injected cart was built with the child's stub")
        #expect(Container.current === outside)
    }

    @Test func withContainerBindsBothAndRestoresThem() async throws {
        let test = ArborTesting.overriding(Shop.shared) { $0.register((any PriceService).self) { _ in StubPrices() } }
        let outside = Container.current

        let prices = ArborTesting.withContainer(test) { Basket().cart.prices }
        let fromTask = await ArborTesting.withContainer(test) {
            await Task { (ArborTesting.current, Container.current) }.value
        }

        #expect(prices is StubPrices)
        #expect(fromTask.0 === test && fromTask.1 === test)
        #expect(ArborTesting.current == nil)
        #expect(Container.current === outside)
    }

    @Test func eachCallGetsANewChild() throws {
        let registeredInFirst = expectNoLeaks(in: Shop.shared) { test in
            test.register(Boom.self) { _ in Boom() }
            return test.isRegistered(Boom.self)
        }
        let registeredInSecond = expectNoLeaks(in: Shop.shared) { test in test.isRegistered(Boom.self) }

        #expect(registeredInFirst)
        #expect(!registeredInSecond, "registrations of one call do not reach the next")
        #expect(!Shop.shared.isRegistered(Boom.self))
    }

    @Test func resolutionsStartedInTheParentAreNotWatched() throws {
        // Documented limit: resolve through the child, so that tests running in parallel don't see each other.
        let app = Shop.makeContainer()
        let reports = Reports<SourceLocation>()
        var leaked = WeakBox<LeakyView>(nil)

        try expectNoLeaks(in: app, report: reports.append) { _ in
            leaked.object = try app.resolve(LeakyView.self)
        }

        #expect(reports.all.isEmpty)
        Shop.release(leaked.object)
    }

    // MARK: Async

    @Test func asyncLeakingBodyIsReported() async throws {
        let reports = Reports<SourceLocation>()
        var leaked = WeakBox<LeakyView>(nil)

        try await expectNoLeaks(in: Shop.shared, report: reports.append) { test in
            await Task.yield()
            // Resolved in another task; only the cycle keeps it alive.
            leaked = try await Task { WeakBox(try test.resolve(LeakyView.self)) }.value
        }

        #expect(reports.all.map { $0.report.leaks.count } == [2])
        Shop.release(leaked.object)
    }

    @Test func asyncCleanBodyPassesByDefaultAndReturnsItsValue() async throws {
        let items = try await expectNoLeaks(in: Shop.shared) { test in
            await Task.yield()
            let cart = try await test.resolve(Cart.self)
            cart.items = ["bread"]
            return cart.items
        }
        #expect(items == ["bread"])
    }

    @Test func asyncLeakingBodyFailsTheTestByDefault() async throws {
        var leaked = WeakBox<LeakyView>(nil)

        try await withKnownIssue {
            try await expectNoLeaks(in: Shop.shared) { test in
                await Task.yield()
                leaked.object = try await test.resolve(LeakyView.self)
            }
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("LeakyView.presenter → LeakyPresenter")
        }

        Shop.release(leaked.object)
    }

    @Test func childIsCurrentInTasksTheBodyStarts() async throws {
        await expectNoLeaks(in: Shop.shared) { test in
            async let seen = ArborTesting.current
            let fromGroup = await withTaskGroup(of: Container?.self) { group in
                group.addTask { ArborTesting.current }
                return await group.next() ?? nil
            }
            #expect(await seen === test)
            #expect(fromGroup === test)
        }
    }

    @MainActor @Test func asyncBodyRunsOnTheCallersActor() async throws {
        var touched = 0  // main-actor state, used without hopping
        try await expectNoLeaks(in: Shop.shared) { test in
            MainActor.assertIsolated()
            await Task.yield()
            touched += try await test.resolve(Cart.self).items.count + 1
        }
        #expect(touched == 1)
    }

    // MARK: leakCheck, without a test framework

    @Test func leakCheckReturnsTheValueAndTheReport() throws {
        var leaked = WeakBox<LeakyView>(nil)

        let (count, report) = try ArborTesting.leakCheck(in: Shop.shared) { test in
            let view = try test.resolve(LeakyView.self)
            leaked.object = view
            return 42
        }

        #expect(count == 42)
        #expect(report.leaks.count == 2)
        #expect(report.trackedCount == 2)
        Shop.release(leaked.object)

        let (view, returned) = try ArborTesting.leakCheck(in: Shop.shared) { test in
            try test.resolve(CheckoutView.self)
        }
        #expect(returned.leaks.map(\.typeName).sorted() == ["Cart", "CheckoutPresenter", "CheckoutView"])
        withExtendedLifetime(view) {}
    }
}

/// What ArborTesting prints to standard error for failures off a test's task while `body` runs (other tests' too).
private func capturingStandardError(_ body: () async throws -> Void) async throws -> String {
    let printed = LockedValue("")
    TestFailure.capturedOutsideTest.withLock { $0 = { text in printed.withLock { $0 += text } } }
    defer { TestFailure.capturedOutsideTest.withLock { $0 = nil } }
    try await body()
    return printed.withLock { $0 }
}
