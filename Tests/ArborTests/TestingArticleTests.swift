import Arbor
import Foundation
import Testing

// The Swift snippets of the article "Testing: child-container overrides and leak checks"
// (Sources/Arbor/Arbor.docc/Testing.md), compiled and run, like the README's (ReadmeTests.swift): each is copied
// between `// ARTICLE: <section>` and `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks that the copies
// and the article agree. The leak report the article prints is checked against the real one.

private enum TestingArticle {
    protocol HTTPClient: Sendable {}
    final class LiveClient: HTTPClient {}
    struct StubClient: HTTPClient {}

    enum TimeOfDay: Sendable { case morning, noon }
    protocol Clock: Sendable {}
    final class SystemClock: Clock {}
    struct FixedClock: Clock {
        let time: TimeOfDay
        init(_ time: TimeOfDay) { self.time = time }
    }

    final class FeedModel {
        let client: any HTTPClient
        let clock: any Clock
        init(client: any HTTPClient, clock: any Clock) {
            self.client = client
            self.clock = clock
        }
    }

    final class ForecastCache: Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }

    struct Greeter {
        let name: String
        let times: Int
    }

    final class FeedPresenter {
        let client: any HTTPClient
        let clock: any Clock
        /// Set only by the leaking wiring: a strong back reference, the mistake the article's report shows.
        var view: FeedScreen?
        private(set) var isLoaded = false
        init(client: any HTTPClient, clock: any Clock) {
            self.client = client
            self.clock = clock
        }
        func load() { isLoaded = true }
    }

    final class FeedScreen {
        let presenter: FeedPresenter
        init(presenter: FeedPresenter) { self.presenter = presenter }
        func show() { presenter.load() }
    }

    protocol Engine: Sendable {}
    struct TestEngine: Engine {}
    protocol Radio: Sendable {}
    struct TestRadio: Radio {}
    final class CarViewModel {
        @Inject var engine: any Engine
        @LazyInject var radio: any Radio
    }

    /// The app's wiring, as the app builds it; with `presenterKeepsItsScreen`, with the retain cycle of the article's
    /// leak report.
    enum AppContainer {
        static func make(presenterKeepsItsScreen: Bool = false) -> Container {
            let container = Container()
            container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
            container.register(Clock.self) { _ in SystemClock() }.inObjectScope(.permanent)
            container.register(FeedModel.self) { r in FeedModel(client: try r.resolve(), clock: try r.resolve()) }
            container.register(ForecastCache.self) { r in ForecastCache(client: try r.resolve()) }
                .inObjectScope(.permanent)
            container.register(Greeter.self) { (_, name: String, times: Int) in Greeter(name: name, times: times) }
            container.register(FeedPresenter.self) { r in
                FeedPresenter(client: try r.resolve(), clock: try r.resolve())
            }
            container.register(FeedScreen.self) { r in FeedScreen(presenter: try r.resolve()) }
                .initCompleted { _, screen in
                    if presenterKeepsItsScreen { screen.presenter.view = screen }
                }
            return container
        }
    }

    /// The article's leak check of a screen resolved from a child of `app`, which records an issue with the report if
    /// something is still alive; returns the report.
    static func checkTheFeedScreenForLeaks(in app: Container) throws -> LeakReport {
        // ARTICLE: Find leaks
        let test = app.makeChild()
        let tracker = LeakTracker(test)
        do {
            let screen = try test.resolve(FeedScreen.self)
            screen.show()
        }  // the test's references are gone
        let report = tracker.check()
        #expect(report.isClean, "\(report)")
        // ARTICLE end
        return report
    }

    @Suite struct Tests {
        @Test func overrideInAChild() throws {
            // ARTICLE: Override in a child
            let app = AppContainer.make()  // the app's wiring, as the app builds it

            let test = app.makeChild()
            test.register(HTTPClient.self) { _ in StubClient() }
            test.register(Clock.self, instance: FixedClock(.noon))

            let model = try test.resolve(FeedModel.self)  // built with StubClient and FixedClock
            // ARTICLE end
            #expect(model.client is StubClient)
            #expect((model.clock as? FixedClock)?.time == .noon)
            let screen = try test.resolve(FeedScreen.self)
            #expect(screen.presenter.client is StubClient, "a graph service deeper down sees the override too")
            let appsModel = try app.resolve(FeedModel.self)
            #expect(appsModel.client is LiveClient && appsModel.clock is SystemClock, "the app is untouched")

            let appsCache = try test.resolve(ForecastCache.self)
            #expect(
                appsCache.client is LiveClient, "the app's permanent keeps the app's client, though a test built it")
            #expect(try app.resolve(ForecastCache.self) === appsCache)
            // ARTICLE: Override in a child
            test.register(ForecastCache.self) { r in ForecastCache(client: try r.resolve()) }
                .inObjectScope(.permanent)  // the test's own cache, built with StubClient
            // ARTICLE end
            let testsCache = try test.resolve(ForecastCache.self)
            #expect(testsCache.client is StubClient)
            #expect(testsCache !== appsCache)
            #expect(try test.resolve(ForecastCache.self) === testsCache, "permanent in the test's child")
            #expect(try app.resolve(ForecastCache.self) === appsCache)

            test.unregister(HTTPClient.self)
            #expect(try test.resolve(FeedModel.self).client is LiveClient, "the app's registration again")
        }

        @Test func codeThatUsesInject() throws {
            // ARTICLE: Code that uses @Inject
            let test = Container.current.makeChild()
            test.register(Engine.self) { _ in TestEngine() }

            let model = Container.$current.withValue(test) { CarViewModel() }  // model.engine is a TestEngine
            // ARTICLE end
            #expect(model.engine is TestEngine)
            #expect(Container.current !== test, "outside the closure, current is what it was")
            test.register(Radio.self) { _ in TestRadio() }
            #expect(try model.$radio.instance is TestRadio, "@LazyInject resolves from the test's child, later")
        }

        // ARTICLE: Check the whole wiring at once
        @Test func theAppIsWiredCorrectly() {
            let report = AppContainer.make().validate { samples in
                samples.add(Greeter.self, arguments: "Ann", 3)  // registrations with arguments need sample values
            }
            #expect(report.isValid, "\(report)")
        }
        // ARTICLE end

        @Test func registrationsWithArgumentsAreCheckedWithSamplesOnly() {
            let greeter = ServiceKey(Greeter.self, arguments: String.self, Int.self)
            let withoutSamples = AppContainer.make().validate()
            #expect(withoutSamples.notChecked == [greeter])
            #expect(!withoutSamples.checked.contains(greeter))
            let withSamples = AppContainer.make().validate { $0.add(Greeter.self, arguments: "Ann", 3) }
            #expect(withSamples.checked.contains(greeter))
            #expect(withSamples.notChecked.isEmpty)
        }

        @Test func aCleanScreenLeavesACleanReport() throws {
            let report = try checkTheFeedScreenForLeaks(in: AppContainer.make())
            #expect(report.isClean)
            #expect(report.trackedCount == 4, "the screen, its presenter, and the app's client and clock")
        }

        /// With a presenter that holds its screen strongly, the article's check fails, with the report it prints.
        @Test func aRetainCycleGivesTheReportShown() throws {
            var report: LeakReport?
            withKnownIssue("the screen and its presenter keep each other alive") {
                report = try checkTheFeedScreenForLeaks(in: AppContainer.make(presenterKeepsItsScreen: true))
            }
            let shown = try #require(try Article.text(in: "Find leaks"))
            #expect(report?.description == shown, "printed:\n\(report?.description ?? "")")
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }

    /// A server's app, whose handlers need a value only a request has: its root alone does not validate.
    enum Server {
        struct RequestInfo: Sendable {
            let path: String
        }
        final class UnitOfWork {}
        final class NotesHandler {
            let request: RequestInfo
            let work: UnitOfWork
            init(request: RequestInfo, work: UnitOfWork) {
                self.request = request
                self.work = work
            }
        }

        enum AppContainer {
            static func make() -> Container {
                let container = Container()
                container.register(UnitOfWork.self) { _ in UnitOfWork() }.inObjectScope(.perContainer)
                container.register(NotesHandler.self) { r in
                    NotesHandler(request: try r.resolve(), work: try r.resolve())
                }
                return container
            }
        }

        @Suite struct Tests {
            // ARTICLE: Validate the container a request gets
            @Test func aRequestIsWiredCorrectly() {
                let request = AppContainer.make().makeChild()
                request.register(RequestInfo.self, instance: RequestInfo(path: "/notes"))
                for problem in request.validate().problems {
                    switch problem.kind {
                    case .resolutionFailed(let error):
                        Issue.record("\(problem.key) does not resolve: \(error.reason), path \(problem.path)")
                    case .captiveDependency(let holder):
                        Issue.record("\(holder) keeps \(problem.path.last!) alive: \(problem)")
                    case .releaseHooksNeverRun:
                        Issue.record("\(problem)")  // onRelease on a scope no container holds
                    }
                }
            }
            // ARTICLE end

            @Test func theAppAloneDoesNotBuildAHandler() throws {
                let report = AppContainer.make().validate()
                try #require(report.problems.count == 1, "\(report)")
                let problem = report.problems[0]
                #expect(problem.key == ServiceKey(NotesHandler.self))
                guard case .resolutionFailed(let error) = problem.kind, case .notRegistered = error.reason else {
                    Issue.record("expected RequestInfo not to be registered: \(problem)")
                    return
                }
                #expect(error.key == ServiceKey(RequestInfo.self))
            }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/Testing.md", marker: "ARTICLE", testFile: URL(fileURLWithPath: #filePath))
