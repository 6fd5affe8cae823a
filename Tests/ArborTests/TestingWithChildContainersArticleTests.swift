import Arbor
import ArborTesting
import Foundation
import Testing
import XCTest

// The Swift snippets of the article "Testing with child containers and leak checks"
// (Sources/ArborTesting/ArborTesting.docc/TestingWithChildContainers.md), compiled and run, like the README's
// (ReadmeTests.swift): each is copied between `// ARTICLE: <section>` and `// ARTICLE end`, and
// `everySwiftBlockOfTheArticleIsHere` checks that the copies and the article agree. The Vapor server test's copy is
// in ArborVaporTests, which compiles and runs it with `swift test --traits Vapor`.
//
// The article's types are private to the file, at its top level rather than in an enum: XCTest on Linux finds only
// test case classes declared at the top level, and the article's XCTest cases use these types.

private enum TimeOfDay: Sendable { case morning, noon }

private protocol Clock: Sendable {
    var now: TimeOfDay { get }
}

private struct SystemClock: Clock {
    var now: TimeOfDay { Calendar.current.component(.hour, from: Date()) < 12 ? .morning : .noon }
}

private struct FixedClock: Clock {
    let now: TimeOfDay
    init(_ now: TimeOfDay) { self.now = now }
}

private final class Greeter {
    let clock: any Clock
    init(clock: any Clock) { self.clock = clock }
    var greeting: String { clock.now == .morning ? "Good morning" : "Good afternoon" }
}

private protocol HTTPClient: Sendable {
    func headlines() -> [String]
}

private final class LiveClient: HTTPClient {
    func headlines() -> [String] { ["Arbor 1.0 is out"] }
}

private struct StubClient: HTTPClient {
    func headlines() -> [String] { ["(stub)"] }
}

/// The presenter keeps its screen until the screen is closed.
private final class FeedPresenter {
    let client: any HTTPClient
    var screen: FeedScreen?
    init(client: any HTTPClient) { self.client = client }
}

private final class FeedScreen {
    let presenter: FeedPresenter
    init(presenter: FeedPresenter) { self.presenter = presenter }
    var title: String { "Headlines" }
    func close() { presenter.screen = nil }
}

private protocol Payments: Sendable {
    func pay(_ amount: Int) throws -> Bool
}

/// Without a network, a test's payment is declined.
private final class LivePayments: Payments {
    func pay(_ amount: Int) throws -> Bool { false }
}

private struct StubPayments: Payments {
    func pay(_ amount: Int) throws -> Bool { true }
}

private final class CheckoutModel {
    @Inject var payments: any Payments
    func pay(_ amount: Int) throws -> Bool { try payments.pay(amount) }
}

private enum CheckoutError: Error, Equatable { case emptyCart }

private final class Cart {
    let payments: any Payments
    private var prices: [Int] = []
    init(payments: any Payments) { self.payments = payments }
    func add(price: Int) { prices.append(price) }
    /// With a tax of 20 %.
    var total: Int { prices.reduce(0, +) * 120 / 100 }
    func checkOut() throws {
        guard !prices.isEmpty else { throw CheckoutError.emptyCart }
        _ = try payments.pay(total)
    }
}

private enum AppContainer {
    /// The app's container, shared by the tests as an app's would be.
    static let shared = make()

    static func make() -> Container {
        let container = Container()
        container.register(Clock.self) { _ in SystemClock() }
        container.register(Greeter.self) { r in Greeter(clock: try r.resolve()) }
        container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
        container.register(FeedPresenter.self) { r in FeedPresenter(client: try r.resolve()) }
        container.register(FeedScreen.self) { r in FeedScreen(presenter: try r.resolve()) }
            .initCompleted { _, screen in screen.presenter.screen = screen }
        container.register(Payments.self) { _ in LivePayments() }.inObjectScope(.permanent)
        container.register(Cart.self) { r in Cart(payments: try r.resolve()) }
        return container
    }
}

private enum TestingWithChildContainersArticle {
    @Suite struct Tests {
        #if compiler(>=6.1)  // the trait needs TestScoping, from Swift 6.1
        // ARTICLE: Give each test a child container (Swift Testing)
        @Test(
            .childContainer(of: AppContainer.shared) { test in
                test.register(Clock.self) { _ in FixedClock(.noon) }
            })
        func greetingAtNoon() throws {
            #expect(try ArborTesting.container.resolve(Greeter.self).greeting == "Good afternoon")
        }
        // ARTICLE end

        // ARTICLE: Give each test a child container (Swift Testing)
        @Suite(.childContainer(of: AppContainer.shared, checkingLeaks: true))
        struct CheckoutTests {
            @Test func totalIncludesTax() throws {
                let cart = try ArborTesting.container.resolve(Cart.self)
                cart.add(price: 100)
                #expect(cart.total == 120)
            }

            @Test func emptyCartCannotCheckOut() throws {
                let cart = try ArborTesting.container.resolve(Cart.self)
                #expect(throws: CheckoutError.emptyCart) { try cart.checkOut() }
            }
        }
        // ARTICLE end
        #endif

        @Test func theSharedContainerKeepsTheAppsServices() throws {
            #expect(try AppContainer.shared.resolve(Clock.self) is SystemClock)
            #expect(try AppContainer.shared.resolve(Payments.self) is LivePayments)
            #expect(try AppContainer.shared.resolve(HTTPClient.self) is LiveClient)
        }

        @Test func aScreenLeftOpenIsReported() throws {
            var reports: [LeakReport] = []
            weak var leftOpen: FeedScreen?
            try expectNoLeaks(in: AppContainer.shared, report: { report, _ in reports.append(report) }) { test in
                test.register(HTTPClient.self) { _ in StubClient() }
                let screen = try test.resolve(FeedScreen.self)
                #expect(screen.presenter.client is StubClient)
                leftOpen = screen
            }
            try #require(reports.count == 1)
            #expect(reports[0].leaks.map(\.typeName) == ["FeedPresenter", "FeedScreen"])
            leftOpen?.close()
            #expect(leftOpen == nil, "closed, the screen is released")
        }

        @Test func inspectTheReportYourself() throws {
            let app = AppContainer.make()
            var printed: [String] = []
            func print(_ text: String) { printed.append(text) }
            // ARTICLE: Inspect the report yourself
            let (title, report) = try ArborTesting.leakCheck(in: app) { test in
                try test.resolve(FeedScreen.self).title
            }
            print(report.isClean ? "no leaks" : "\(report)")
            // ARTICLE end
            #expect(title == "Headlines")
            #expect(report.leaks.map(\.typeName) == ["FeedPresenter", "FeedScreen"], "the screen was not closed")
            #expect(report.description.contains("FeedPresenter.screen → FeedScreen"))
            #expect(report.description.contains("FeedScreen.presenter → FeedPresenter"))
            #expect(printed == [report.description])
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

// ARTICLE: Check one piece of code for leaks
@Test func closingTheFeedReleasesIt() throws {
    try expectNoLeaks(in: AppContainer.shared) { test in
        test.register(HTTPClient.self) { _ in StubClient() }  // overrides stay in the child
        let screen = try test.resolve(FeedScreen.self)
        screen.close()
    }
}

final class FeedTests: XCTestCase {
    func testClosingTheFeedReleasesIt() throws {
        try assertNoLeaks(in: AppContainer.shared) { test in
            let screen = try test.resolve(FeedScreen.self)
            screen.close()
        }
    }
}
// ARTICLE end

final class TestingWithChildContainersArticleXCTests: XCTestCase {
    // ARTICLE: Code that uses @Inject
    func testCheckoutUsesTheStub() throws {
        let test = ArborTesting.overriding(AppContainer.shared) { child in
            child.register(Payments.self) { _ in StubPayments() }
        }
        try ArborTesting.withContainer(test) {
            let model = CheckoutModel()  // its @Inject var payments: Payments is a StubPayments
            XCTAssertTrue(try model.pay(10))
        }
    }
    // ARTICLE end

    func testTheAppDeclinesWithoutTheStub() throws {
        try ArborTesting.withContainer(AppContainer.shared) {
            XCTAssertFalse(try CheckoutModel().pay(10))
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/ArborTesting/ArborTesting.docc/TestingWithChildContainers.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath),
    alsoIn: ["Tests/ArborVaporTests/TestingWithChildContainersArticleTests.swift"])
