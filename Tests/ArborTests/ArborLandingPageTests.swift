import Arbor
import Foundation
import Testing

// The Swift snippet of the documentation's landing page (Sources/Arbor/Arbor.docc/Arbor.md), compiled and run, like
// the README's (ReadmeTests.swift): it is copied between `// ARTICLE: <section>` and `// ARTICLE end`, and
// `everySwiftBlockOfTheArticleIsHere` checks that the copy and the page agree. The page's `import Arbor` is this
// file's.

private enum ArborLandingPage {
    protocol HTTPClient: AnyObject, Sendable {}
    final class LiveClient: HTTPClient {}
    final class FeedModel: Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }

    @Suite struct Tests {
        @Test func overview() throws {
            // ARTICLE: Overview
            let container = Container()
            container.register(HTTPClient.self) { _ in LiveClient() }
                .inObjectScope(.permanent)
            container.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }

            let model = try container.resolve(FeedModel.self)
            // ARTICLE end

            let client = try container.resolve(HTTPClient.self)
            #expect(client is LiveClient)
            #expect(model.client === client, "one permanent client")
            #expect(try container.resolve(FeedModel.self) !== model, "graph scope: a new model for every resolve")
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/Arbor.md", marker: "ARTICLE", testFile: URL(fileURLWithPath: #filePath))
