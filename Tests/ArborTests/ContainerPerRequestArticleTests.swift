import Arbor
import ArborTestSupport
import Foundation
import Testing

// The Swift snippets of the article "A container per request" (Sources/Arbor/Arbor.docc/AContainerPerRequest.md),
// compiled and run, like the README's (ReadmeTests.swift): each is copied between `// ARTICLE: <section>` and
// `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks that the copies and the article agree. The servers'
// snippets need the integrations' traits: their copies are in the integrations' tests, which compile and run them
// with `swift test --traits Hummingbird,Vapor,ServiceLifecycle`.

private enum ContainerPerRequestArticle {
    final class ConnectionPool: Sendable {}
    final class UnitOfWork: Sendable {
        let pool: ConnectionPool
        private let rolledBack = Locked(false)
        init(pool: ConnectionPool) { self.pool = pool }
        func rollBackIfOpen() { rolledBack.withLock { $0 = true } }
        var isRolledBack: Bool { rolledBack.withLock { $0 } }
    }
    final class NotesHandler: Sendable {
        let work: UnitOfWork
        let pool: ConnectionPool
        init(work: UnitOfWork, pool: ConnectionPool) {
            self.work = work
            self.pool = pool
        }
    }
    struct RequestInfo: Sendable {
        let id: String
        let path: String
    }

    @Suite struct Tests {
        @Test func aRequestsChildBuildsItsOwnUnitOfWorkAndEndsIt() throws {
            let requestID = "1"
            let path = "/notes/1"
            // ARTICLE: Overview
            let app = Container()
            app.register(ConnectionPool.self) { _ in ConnectionPool() }.inObjectScope(.permanent)  // one for the app
            app.register(UnitOfWork.self) { r in UnitOfWork(pool: try r.resolve()) }
                .inObjectScope(.perContainer)  // one per request
                .onRelease { work in work.rollBackIfOpen() }
            app.register(NotesHandler.self) { r in NotesHandler(work: try r.resolve(), pool: try r.resolve()) }

            // For each request:
            let request = app.makeChild()
            request.register(RequestInfo.self, instance: RequestInfo(id: requestID, path: path))
            let handler = try request.resolve(NotesHandler.self)  // its UnitOfWork is this request's own
            // … write the response …
            request.close()  // rolls back the unit of work if still open
            // ARTICLE end

            #expect(handler.work.isRolledBack)
            #expect(handler.pool === (try app.resolve(ConnectionPool.self)), "the app's one pool")
            let nextRequest = app.makeChild()
            let next = try nextRequest.resolve(NotesHandler.self)
            #expect(next.work !== handler.work, "another request's child builds its own")
            #expect(!next.work.isRolledBack, "until its own request ends")
            nextRequest.close()
            #expect(next.work.isRolledBack)
            #expect(throws: ResolutionError.self) { try request.resolve(NotesHandler.self) }
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/AContainerPerRequest.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath),
    alsoIn: [
        "Tests/ArborHummingbirdTests/ContainerPerRequestArticleTests.swift",
        "Tests/ArborVaporTests/ContainerPerRequestArticleTests.swift",
    ])
