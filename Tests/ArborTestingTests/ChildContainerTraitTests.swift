#if compiler(>=6.1)  // the trait needs TestScoping, from Swift 6.1
import Arbor
import ArborTesting
import Testing

// The `.childContainer(of:)` trait: each test gets its own child of the app's container, with its overrides, as
// `ArborTesting.container`; with `checkingLeaks: true` a test that leaves something alive fails with the report.
//
// The first tests use the trait as users do. The others call its `provideScope` directly, the way Swift Testing
// does, so they can run a leaking "test" and see that it would fail, and compare the children of two runs.

@Suite struct ChildContainerTraitTests {
    // MARK: As users write it

    @Test(.childContainer(of: Shop.shared) { $0.register((any PriceService).self) { _ in StubPrices() } })
    func testGetsAChildWithItsOverrides() throws {
        let test = ArborTesting.container
        #expect(test.parent === Shop.shared)
        let cart = try test.resolve(Cart.self)
        #expect(cart.prices is StubPrices)
        #expect(Container.current === test)
        #expect(Basket().cart.prices is StubPrices, "@Inject resolves from the test's child")
        #expect(try Shop.shared.resolve(Cart.self).prices is LivePrices, "the app's container is untouched")
    }

    @Test(.childContainer(of: Shop.shared, checkingLeaks: true))
    func cleanTestPassesTheLeakCheck() throws {
        let view = try ArborTesting.container.resolve(CheckoutView.self)
        #expect(view.presenter.view === view)
    }

    @Test(.childContainer(of: Shop.shared, checkingLeaks: true))
    func asyncTestSeesItsChildAcrossTasks() async throws {
        let test = try #require(ArborTesting.current)
        let fromTask = await Task { ArborTesting.current }.value
        #expect(fromTask === test)
        _ = try await Task { try ArborTesting.container.resolve(Cart.self).items }.value
    }

    @Test func withoutTheTraitThereIsNoCurrentContainer() {
        #expect(ArborTesting.current == nil)
    }

    #if compiler(>=6.2) && (os(macOS) || os(Linux) || os(Windows))  // exit tests
    @Test func readingContainerOutsideATestWithOneStops() async {
        await #expect(processExitsWith: .failure) {
            _ = ArborTesting.container
        }
    }
    #endif

    // MARK: Calling the trait's scope directly

    private func run(
        _ trait: ChildContainerTrait,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        let test = try #require(Test.current)
        try await trait.provideScope(for: test, testCase: Test.Case.current, performing: body)
    }

    @Test func leakingTestIsReportedAtTheTest() async throws {
        let reports = Reports<SourceLocation>()
        let trait = ChildContainerTrait(parent: Shop.shared, checksLeaks: true, report: reports.append)
        let leaked = Locked<WeakBox<LeakyView>>(WeakBox(nil))

        try await run(trait) {
            leaked.value = WeakBox(try ArborTesting.container.resolve(LeakyView.self))
        }

        try #require(reports.all.count == 1)
        let (report, location) = reports.all[0]
        #expect(report.leaks.map(\.typeName).sorted() == ["LeakyPresenter", "LeakyView"])
        #expect(report.description.contains("LeakyPresenter.view → LeakyView"))
        #expect(location == Test.current?.sourceLocation, "the issue points at the test")
        Shop.release(leaked.value.object)
    }

    @Test func leakingTestFailsByDefault() async throws {
        let leaked = Locked<WeakBox<LeakyView>>(WeakBox(nil))

        try await withKnownIssue {
            try await run(.childContainer(of: Shop.shared, checkingLeaks: true)) {
                leaked.value = WeakBox(try ArborTesting.container.resolve(LeakyView.self))
            }
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("LeakyView.presenter → LeakyPresenter")
        }

        Shop.release(leaked.value.object)
    }

    @Test func cleanTestIsNotReported() async throws {
        let reports = Reports<SourceLocation>()
        let trait = ChildContainerTrait(parent: Shop.shared, checksLeaks: true, report: reports.append)

        try await run(trait) {
            let view = try ArborTesting.container.resolve(CheckoutView.self)
            #expect(view.presenter.view === view)
        }

        #expect(reports.all.isEmpty)
    }

    @Test func aPerContainerInstanceTheTestKeepsIsReported() async throws {
        let app = Shop.makeContainer()
        app.register(Connection.self) { _ in Connection() }.inObjectScope(.perContainer)
        let reports = Reports<SourceLocation>()
        let trait = ChildContainerTrait(parent: app, checksLeaks: true, report: reports.append)
        let kept = Locked<Connection?>(nil)

        try await run(trait) {
            kept.value = try ArborTesting.container.resolve(Connection.self)
        }

        #expect(reports.all.map { $0.report.leaks.map(\.typeName) } == [["Connection"]])
        #expect(kept.value != nil)
    }

    @Test func leaksAreNotCheckedUnlessAskedFor() async throws {
        let reports = Reports<SourceLocation>()
        let trait = ChildContainerTrait(parent: Shop.shared, report: reports.append)
        let leaked = Locked<WeakBox<LeakyView>>(WeakBox(nil))

        try await run(trait) {
            leaked.value = WeakBox(try ArborTesting.container.resolve(LeakyView.self))
        }

        #expect(reports.all.isEmpty)
        #expect(leaked.value.object != nil)
        Shop.release(leaked.value.object)
    }

    @Test func throwingTestPropagatesItsErrorAndIsNotChecked() async throws {
        let reports = Reports<SourceLocation>()
        let trait = ChildContainerTrait(parent: Shop.shared, checksLeaks: true, report: reports.append)
        let leaked = Locked<WeakBox<LeakyView>>(WeakBox(nil))

        await #expect(throws: Boom.self) {
            try await run(trait) {
                leaked.value = WeakBox(try ArborTesting.container.resolve(LeakyView.self))
                throw Boom()
            }
        }

        #expect(reports.all.isEmpty)
        Shop.release(leaked.value.object)
    }

    @Test func eachRunGetsAFreshChildWithTheOverrides() async throws {
        let app = Shop.makeContainer()
        let trait = ChildContainerTrait(parent: app) { child in
            child.register((any PriceService).self) { _ in StubPrices() }
        }
        let seen = Locked<[Container]>([])

        for _ in 0..<2 {
            try await run(trait) {
                let test = ArborTesting.container
                #expect(!test.isRegistered(Boom.self), "nothing from the previous run")
                test.register(Boom.self) { _ in Boom() }
                let cart = try test.resolve(Cart.self)
                #expect(cart.prices is StubPrices)
                seen.value.append(test)
            }
        }

        #expect(seen.value.count == 2)
        #expect(seen.value.allSatisfy { $0.parent === app })
        #expect(seen.value[0] !== seen.value[1])
        #expect(!app.isRegistered(Boom.self))
        #expect(try await app.resolve(Cart.self).prices is LivePrices)
    }

    @Test func throwingOverridesStopTheTestBeforeItRuns() async throws {
        let trait = ChildContainerTrait(parent: Shop.shared) { _ in throw Boom() }
        let ran = Locked(false)

        await #expect(throws: Boom.self) {
            try await run(trait) { ran.value = true }
        }

        #expect(!ran.value)
    }

    /// Without a leak check too, the test's child is closed when the test ends (awaiting its `async` release
    /// hooks), whether it returns or throws.
    @Test(arguments: [false, true])
    func theChildIsClosedWhenTheTestEnds(throwing: Bool) async throws {
        let app = Shop.makeContainer()
        let releases = ReleaseRecorder()
        app.register(Connection.self) { _ in Connection() }.inObjectScope(.perContainer)
            .onRelease { _ async in await Task.yield() }
            .recordingReleases(in: releases)
        let child = Locked<Container?>(nil)

        do {
            try await run(ChildContainerTrait(parent: app)) {
                child.value = ArborTesting.container
                _ = try ArborTesting.container.resolve(Connection.self)
                if throwing { throw Boom() }
            }
            #expect(!throwing)
        } catch {
            #expect(throwing && error is Boom)
        }

        #expect(releases.released == ["Connection"], "closed with closeAndWait: the async hook ran first")
        #expect(child.value?.isClosed == true)
    }

    /// A test's trait inside a suite's (or another test's): the test's child is a child of the enclosing one, so
    /// the test has both sets of overrides, its own winning, and the enclosing leak check covers it.
    @Test func aTraitInsideAnotherNestsItsChildAndTheOuterLeakCheckCoversIt() async throws {
        let app = Shop.makeContainer()
        let reports = Reports<SourceLocation>()
        let overrides: @Sendable (Container) -> Void = { child in
            child.register((any PriceService).self) { _ in StubPrices() }
            child.register(String.self, name: "who") { _ in "suite" }
        }
        let suite = ChildContainerTrait(parent: app, checksLeaks: true, overrides: overrides, report: reports.append)
        let test = ChildContainerTrait(parent: app) { child in
            child.register(String.self, name: "who") { _ in "test" }
        }
        let leaked = Locked<WeakBox<LeakyView>>(WeakBox(nil))

        try await run(suite) {
            let suiteChild = ArborTesting.container
            try await run(test) {
                let testChild = ArborTesting.container
                #expect(testChild.parent === suiteChild)
                #expect(try testChild.resolve(Cart.self).prices is StubPrices, "the suite's override")
                #expect(try testChild.resolve(String.self, name: "who") == "test", "the test's, over the suite's")
                leaked.value = WeakBox(try testChild.resolve(LeakyView.self))
            }
        }

        #expect(reports.all.map { $0.report.leaks.map(\.typeName).sorted() } == [["LeakyPresenter", "LeakyView"]])
        Shop.release(leaked.value.object)

        // A trait of another app's container does not nest in this one's child.
        let other = Shop.makeContainer()
        try await run(suite) {
            try await run(ChildContainerTrait(parent: other)) {
                #expect(ArborTesting.container.parent === other)
            }
        }
    }

    @Test func traitAppliesToEachTestOfASuite() {
        let trait = ChildContainerTrait.childContainer(of: Shop.shared, checkingLeaks: true)
        #expect(trait.isRecursive)
        #expect(trait.checksLeaks)
        #expect(trait.parent === Shop.shared)
    }
}

/// The trait on a suite: every test, and every case of a parameterized test, runs in a child of its own.
@Suite(.childContainer(of: Shop.shared, checkingLeaks: true))
struct ChildContainerSuiteTraitTests {
    @Test(arguments: ["tea", "milk", "bread"])
    func eachCaseHasItsOwnChild(item: String) throws {
        let test = ArborTesting.container
        #expect(test.parent === Shop.shared)
        #expect(!test.isRegistered(String.self, name: "item"), "no other case registered in this child")
        test.register(String.self, name: "item") { _ in item }
        #expect(try test.resolve(String.self, name: "item") == item)
    }

    @Test func testsOfTheSuiteAreCheckedForLeaks() throws {
        let cart = try ArborTesting.container.resolve(Cart.self)
        cart.items = ["tea"]
        #expect(cart.total == 300)
    }

    /// As users write it: the test's own trait nests in the suite's.
    @Test(.childContainer(of: Shop.shared) { $0.register((any PriceService).self) { _ in StubPrices() } })
    func aTestsOwnTraitAddsToTheSuites() throws {
        let test = ArborTesting.container
        #expect(test.parent?.parent === Shop.shared, "the test's child, in the suite's")
        #expect(try test.resolve(Cart.self).prices is StubPrices)
    }
}
#endif
