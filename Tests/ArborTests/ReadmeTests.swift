import Arbor
import Foundation
import Testing

// The README's Swift snippets, compiled and run. Each one is copied from the README between a line
// `// README: <title of its section>` and a line `// README end`; whitespace may differ, nothing else.
// `everySwiftBlockOfTheReadmeIsHere` checks that the copies and the README agree, and the errors test checks the
// README's printed error against the real one. The types the snippets use are declared here, private to the file.

private enum ReadmeTour {
    final class AppModel: Sendable {}
    protocol Engine: AnyObject, Sendable {}
    final class V8: Engine {}
    final class Car {
        let engine: Engine
        init(engine: Engine) { self.engine = engine }
    }
    struct Greeter {
        let name: String
        let times: Int
        init(_ name: String, _ times: Int) {
            self.name = name
            self.times = times
        }
    }
    protocol Clock: Sendable {}
    struct SystemClock: Clock {}

    protocol HTTPClient: Sendable {}
    struct LiveClient: HTTPClient {}
    struct StubClient: HTTPClient {}
    final class FeedModel {
        let client: HTTPClient
        init(client: HTTPClient) { self.client = client }
    }

    final class Parent {
        let child: Child
        init(child: Child) { self.child = child }
    }
    final class Child {
        weak var parent: Parent?
    }

    final class FeedView {}

    protocol Plugin: Sendable { var name: String { get } }
    struct SpellingPlugin: Plugin { let name = "spelling" }
    struct GrammarPlugin: Plugin { let name = "grammar" }

    struct DatabaseConfig: Sendable {}
    final class Database: Sendable {
        init(config: DatabaseConfig) {}
        static func connect(config: DatabaseConfig) async throws -> Database {
            await Task.yield()
            return Database(config: config)
        }
    }
    @MainActor final class FeedViewModel {
        let database: Database
        init(database: Database) {
            MainActor.assertIsolated()
            self.database = database
        }
    }

    @Suite struct Tests {
        @Test func registerThenResolve() throws {
            // README: Register, then resolve
            let container = Container()
            container.register(Engine.self) { _ in V8() }
                .inObjectScope(.permanent)
            container.register(Car.self) { r in Car(engine: try r.resolve()) }
            container.register(Car.self, name: "sports") { r in Car(engine: try r.resolve(Engine.self)) }
            container.register(Greeter.self) { (r, name: String, times: Int) in Greeter(name, times) }
            container.register(Clock.self, instance: SystemClock())

            let car = try container.resolve(Car.self)
            let inferred: Car = try container.resolve()
            let sports = try container.resolve(Car.self, name: "sports")  // the same permanent V8 as `car`
            let greeter = try container.resolve(Greeter.self, arguments: "Ann", 3)
            // README end

            #expect(car.engine is V8)
            #expect(sports.engine === car.engine)
            #expect(inferred !== car)  // graph scope: a new Car for every top-level resolve
            #expect(inferred.engine === car.engine)
            #expect(greeter.name == "Ann" && greeter.times == 3)
            #expect(try container.resolve(Clock.self) is SystemClock)
        }

        @Test func lessWiring() throws {
            // README: Less wiring: autoregistration and collections
            let container = Container()
            container.register(Engine.self) { _ in V8() }.inObjectScope(.permanent)
            container.autoregister(Car.self, initializer: Car.init)  // each parameter resolved by its type
            container.register(Plugin.self, name: "spelling") { _ in SpellingPlugin() }
            container.register(Plugin.self, name: "grammar") { _ in GrammarPlugin() }

            let car = try container.resolve(Car.self)
            let plugins = try container.resolveAll(Plugin.self)  // spelling, then grammar
            container.resetInstance(of: Engine.self)  // drops the permanent V8: the next resolve builds a new one
            // README end

            #expect(car.engine is V8)
            #expect(plugins.map(\.name) == ["spelling", "grammar"])
            #expect(try container.resolve(Car.self).engine !== car.engine)
        }

        @Test func overrideInAChild() throws {
            // README: Override in a child
            let app = Container()
            app.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
            app.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }

            let test = app.makeChild()
            test.register(HTTPClient.self) { _ in StubClient() }
            let model = try test.resolve(FeedModel.self)  // built with StubClient; `app` is untouched
            // README end

            #expect(model.client is StubClient)
            #expect(try app.resolve(FeedModel.self).client is LiveClient)
            #expect(try app.resolve(HTTPClient.self) is LiveClient)
        }

        @Test func circularGraphsWithInitCompleted() throws {
            let container = Container()
            // README: Circular graphs with `initCompleted`
            container.register(Parent.self) { r in Parent(child: try r.resolve()) }
            container.register(Child.self) { _ in Child() }
                .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }  // `parent` is weak

            let parent = try container.resolve(Parent.self)  // parent.child.parent === parent
            // README end

            #expect(parent.child.parent === parent)
            weak var released: Parent?
            do {
                let another = try container.resolve(Parent.self)
                released = another
                #expect(another !== parent)
            }
            #expect(released == nil)  // the back reference is weak: no retain cycle
        }

        @Test func swiftConcurrency() async throws {
            let container = Container()
            container.register(DatabaseConfig.self) { _ in DatabaseConfig() }
            // README: Swift concurrency
            container.register(Database.self) { r async throws in
                try await Database.connect(config: try r.resolve())
            }
            .inObjectScope(.permanent)
            container.register(FeedViewModel.self) { @MainActor r in FeedViewModel(database: try r.resolve()) }
                .inObjectScope(.permanent)

            let database = try await container.resolve(Database.self)  // tasks that need it meanwhile wait, suspended
            let prefetch = Task.detached { try await container.resolve(FeedViewModel.self) }  // built on the main actor
            let model = try await container.resolve(FeedViewModel.self)  // waits for the prefetch, suspended
            // README end
            #expect(model.database === database)
            #expect(try await prefetch.value === model, "one view model, built once")
        }

        @Test func errorsThatSayWhatToDo() throws {
            let container = Container()
            var printed: [Any] = []
            func print(_ item: Any) { printed.append(item) }  // the snippet's `print`, recorded

            // README: Errors that say what to do
            container.register(FeedView.self) { _ in FeedView() }
            do {
                _ = try container.resolve(FeedView.self, name: "compact")
            } catch let error as ResolutionError {
                print(error)  // error.reason is .notRegistered
            }
            // README end

            try #require(printed.count == 1)
            let error = try #require(printed[0] as? ResolutionError)
            guard case .notRegistered = error.reason else {
                Issue.record("expected .notRegistered, got \(error.reason)")
                return
            }
            let shown = try #require(try Readme.text(in: "Errors that say what to do"))
            #expect(error.description.hasPrefix(shown), "printed:\n\(error)")
        }

        @Test func seeWhatItDoes() throws {
            let container = Container()
            container.register(AppModel.self) { _ in AppModel() }
            // README: See what it does
            let profile = try container.profile {
                _ = try container.resolve(AppModel.self)
            }
            print(profile)  // the registrations that cost the most, slowest first, with counts and paths
            let svg = profile.flameGraphSVG()  // a flame graph to open in a browser; chromeTraceJSON() for Perfetto

            final class SlowFactories: ResolutionObserver {
                func instanceBuilt(_ event: InstanceBuilt) {
                    if event.factoryDuration > .milliseconds(50) { print("slow: \(event.path)") }
                }
            }
            container.addObserver(SlowFactories())  // this container and its children
            // README end

            #expect(profile.entries.map(\.key) == [ServiceKey(AppModel.self)])
            #expect(svg.contains("AppModel"))
            #expect(container.observers.count == 1)
        }

        /// Every Swift block of the README has its copy in this file, under the title of its section, and every copy
        /// here is still in the README.
        @Test func everySwiftBlockOfTheReadmeIsHere() throws {
            for problem in try Readme.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

/// The README's fenced code blocks, and the copies of its Swift blocks in this file.
private let Readme = DocumentSnippets(
    document: "README.md", marker: "README", testFile: URL(fileURLWithPath: #filePath))
