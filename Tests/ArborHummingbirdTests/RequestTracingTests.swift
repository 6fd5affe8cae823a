#if Hummingbird && Tracing
import Arbor
import ArborHummingbird
import ArborTracing
import Foundation
import Hummingbird
import HummingbirdTesting
import InMemoryTracing
import Testing
import Tracing

/// The setup the article "Seeing what the container does" shows for Hummingbird (its block is copied here, between
/// the `ARTICLE` lines, and checked against the article by ObservationArticleTests): `TracingMiddleware`, then
/// `RequestContainerMiddleware`, and a `TracingObserver` on the root, so that what a handler resolves from
/// `context.container` is traced under the request's span. Needs both traits: `swift test --traits
/// Hummingbird,Tracing`.
@Suite struct RequestTracingTests {
    final class Repository: Sendable {}
    typealias AppRequestContext = TestContext

    /// In the router's test mode, which handles the request in the test's task: the tracer `withTracer` binds there
    /// is the one the middleware and the observer find (a live server's tasks would need one bootstrapped).
    @Test func aHandlersResolvesNestUnderTheRequestsSpan() async throws {
        let tracer = InMemoryTracer()
        let container = Container()
        container.register(Repository.self) { _ in
            Thread.sleep(forTimeInterval: 0.005)  // over the observer's threshold of 1 ms
            return Repository()
        }
        .inObjectScope(.perContainer)

        // ARTICLE: Trace resolves
        container.addObserver(TracingObserver())  // after InstrumentationSystem.bootstrap(…)

        let router = Router(context: AppRequestContext.self)  // a ContainerRequestContext
        router.add(middleware: TracingMiddleware())  // the request's span
        router.add(middleware: RequestContainerMiddleware(root: container))
        router.get("/notes/:id") { _, context in
            _ = try await context.container.resolve(Repository.self)  // "resolve Repository", under "/notes/{id}"
            return "note"
        }
        // ARTICLE end

        try await withTracer(tracer) {
            try await Application(router: router).test(.router) { client in
                let response = try await client.execute(uri: "/notes/1", method: .get)
                #expect(response.status == .ok)
            }
        }

        let spans = tracer.finishedSpans
        let request = try #require(spans.first { $0.operationName == "/notes/{id}" }, "\(spans.map(\.operationName))")
        let resolve = try #require(spans.first { $0.operationName == "resolve Repository" })
        let factory = try #require(spans.first { $0.operationName == "Repository" })
        #expect(resolve.parentSpanID == request.spanID && resolve.traceID == request.traceID)
        #expect(factory.parentSpanID == resolve.spanID)
        #expect(resolve.attributes["arbor.container"]?.toSpanAttribute() == "child (depth 1)")
        #expect(factory.attributes["arbor.keeper"]?.toSpanAttribute() == "child (depth 1)")
    }
}
#endif
