import Arbor
import ArborTesting
import Foundation
import Testing

// The Swift snippet of ArborTesting's landing page (Sources/ArborTesting/ArborTesting.docc/ArborTesting.md),
// compiled and run, like the README's (ReadmeTests.swift): it is copied between `// ARTICLE: <section>` and
// `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks that the copy and the page agree.

private enum ArborTestingArticle {
    protocol HTTPClient: Sendable {
        func headlines() -> [String]
    }
    final class LiveClient: HTTPClient {
        func headlines() -> [String] { ["Arbor 1.0 is out"] }
    }
    struct StubClient: HTTPClient {
        func headlines() -> [String] { ["(stub)"] }
    }

    final class FeedModel {
        let headlines: [String]
        init(client: any HTTPClient) { headlines = client.headlines() }
    }

    /// The presenter keeps its screen until the screen is closed.
    final class FeedPresenter {
        let model: FeedModel
        var screen: FeedScreen?
        init(model: FeedModel) { self.model = model }
    }

    final class FeedScreen {
        let presenter: FeedPresenter
        init(presenter: FeedPresenter) { self.presenter = presenter }
        func close() { presenter.screen = nil }
    }

    enum AppContainer {
        /// The app's container, shared by the tests as an app's would be.
        static let shared = make()

        static func make() -> Container {
            let container = Container()
            container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
            container.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
            container.register(FeedPresenter.self) { r in FeedPresenter(model: try r.resolve()) }
            container.register(FeedScreen.self) { r in FeedScreen(presenter: try r.resolve()) }
                .initCompleted { _, screen in screen.presenter.screen = screen }
            return container
        }
    }

    @Suite struct Tests {
        #if compiler(>=6.1)  // the trait needs TestScoping, from Swift 6.1
        // ARTICLE: Overview
        @Test(
            .childContainer(of: AppContainer.shared, checkingLeaks: true) { test in
                test.register(HTTPClient.self) { _ in StubClient() }
            })
        func feedShowsHeadlines() throws {
            let feed = try ArborTesting.container.resolve(FeedModel.self)  // built with StubClient
            #expect(feed.headlines == ["(stub)"])
        }

        @Test func closingTheFeedReleasesIt() throws {
            try expectNoLeaks(in: AppContainer.shared) { test in
                let screen = try test.resolve(FeedScreen.self)
                screen.close()
            }  // fails the test, with a LeakReport, if the screen or anything it resolved is still alive
        }
        // ARTICLE end
        #endif

        @Test func theSharedContainerKeepsTheLiveClient() throws {
            #expect(try AppContainer.shared.resolve(FeedModel.self).headlines == ["Arbor 1.0 is out"])
        }

        @Test func aScreenLeftOpenFailsTheCheckWithTheReport() throws {
            var reports: [LeakReport] = []
            weak var leftOpen: FeedScreen?
            try expectNoLeaks(in: AppContainer.shared, report: { report, _ in reports.append(report) }) { test in
                leftOpen = try test.resolve(FeedScreen.self)
            }
            try #require(reports.count == 1)
            #expect(reports[0].leaks.map(\.typeName) == ["FeedModel", "FeedPresenter", "FeedScreen"])
            leftOpen?.close()
            #expect(leftOpen == nil, "closed, the screen is released")
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/ArborTesting/ArborTesting.docc/ArborTesting.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath))
