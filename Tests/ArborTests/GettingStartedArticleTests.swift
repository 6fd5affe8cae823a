import Arbor
import Foundation
import Testing

// The Swift snippets of the article "Getting started" (Sources/Arbor/Arbor.docc/GettingStarted.md), compiled and
// run, like the README's (ReadmeTests.swift): each is copied between `// ARTICLE: <section>` and `// ARTICLE end`,
// and `everySwiftBlockOfTheArticleIsHere` checks that the copies and the article agree. Its package manifests are not
// Swift a test can compile: `.ci/run` reads each of them with `swift package dump-package`. The types the snippets use
// are declared here, private to the file.

private enum GettingStartedArticle {
    // ARTICLE: Write your types as usual
    protocol Engine: AnyObject { var horsepower: Int { get } }

    final class V8: Engine {
        let horsepower = 450
    }

    final class Car {
        let engine: any Engine
        init(engine: any Engine) { self.engine = engine }
    }
    // ARTICLE end

    protocol Clock: Sendable {}
    struct SystemClock: Clock {}

    final class AppModel {
        private(set) var isStarted = false
        func start() { isStarted = true }
    }

    struct Greeter {
        let name: String
        let times: Int
        init(_ name: String, _ times: Int) {
            self.name = name
            self.times = times
        }
    }

    final class Request {}
    final class MediaPlayer {}

    // ARTICLE: Every registration of a type: plugins
    protocol EditorPlugin: Sendable { func process(_ text: String) -> String }
    // ARTICLE end

    struct GrammarRules: Sendable {}
    struct SpellingPlugin: EditorPlugin { func process(_ text: String) -> String { text + " [spelling]" } }
    struct GrammarPlugin: EditorPlugin {
        let rules: GrammarRules
        func process(_ text: String) -> String { text + " [grammar]" }
    }
    struct NoGrammar: EditorPlugin { func process(_ text: String) -> String { text } }
    struct EmojiPlugin: EditorPlugin { func process(_ text: String) -> String { text + " [emoji]" } }
    final class Editor {
        let plugins: [any EditorPlugin]
        init(plugins: [any EditorPlugin]) { self.plugins = plugins }
        func process(_ text: String) -> String { plugins.reduce(text) { $1.process($0) } }
    }

    protocol ReadingStore: AnyObject {}
    protocol WritingStore: AnyObject {}
    final class SQLiteStore: ReadingStore, WritingStore {}

    protocol HTTPClient: Sendable {}
    struct LiveClient: HTTPClient {}
    final class FeedModel {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }

    final class PDFExporter {}

    @Suite struct Tests {
        @Test func registerThenResolve() throws {
            // ARTICLE: Register how to build each service
            let container = Container()
            container.register((any Engine).self) { _ in V8() }
                .inObjectScope(.permanent)
            container.register(Car.self) { r in Car(engine: try r.resolve()) }
            // ARTICLE end

            // ARTICLE: Register how to build each service
            container.register(Clock.self, instance: SystemClock())
            // ARTICLE end

            // ARTICLE: Resolve
            let car = try container.resolve(Car.self)
            let inferred: Car = try container.resolve()  // the type is inferred
            // ARTICLE end

            #expect(car.engine.horsepower == 450)
            #expect(inferred !== car, "a new car for each top-level resolve")
            #expect(inferred.engine === car.engine, "the one permanent engine")
            #expect(try container.resolve(Clock.self) is SystemClock)
        }

        @Test func autoregisterIsTheSameRegistration() throws {
            let container = Container()
            container.register((any Engine).self) { _ in V8() }.inObjectScope(.permanent)
            // ARTICLE: Register how to build each service
            container.autoregister(Car.self, initializer: Car.init)
            // the same registration as
            container.register(Car.self) { r in Car(engine: try r.resolve()) }
            // ARTICLE end
            #expect(try container.resolve(Car.self).engine === (try container.resolve((any Engine).self)))

            let auto = Container()
            auto.register((any Engine).self) { _ in V8() }.inObjectScope(.permanent)
            auto.autoregister(Car.self, initializer: Car.init)
            #expect(try auto.resolve(Car.self).engine === (try auto.resolve((any Engine).self)))
        }

        @Test func aMissingServiceIsAnErrorToReactTo() throws {
            let container = Container()
            var missing: [ServiceKey] = []
            // ARTICLE: Resolve
            do {
                let app = try container.resolve(AppModel.self)
                app.start()
            } catch let error as ResolutionError {
                if case .notRegistered = error.reason { print("missing:", error.key) }
            }
            // ARTICLE end
            do {
                _ = try container.resolve(AppModel.self)
            } catch let error as ResolutionError {
                if case .notRegistered = error.reason { missing.append(error.key) }
            }
            #expect(missing == [ServiceKey(AppModel.self)])

            container.register(AppModel.self) { _ in AppModel() }
            #expect(try !container.resolve(AppModel.self).isStarted)
        }

        @Test func namesAndArguments() throws {
            let container = Container()
            container.register((any Engine).self) { _ in V8() }.inObjectScope(.permanent)
            container.register(Car.self) { r in Car(engine: try r.resolve()) }
            // ARTICLE: Names
            container.register(Car.self, name: "sports") { r in Car(engine: try r.resolve()) }

            let sports = try container.resolve(Car.self, name: "sports")
            let alsoSports: Car = try container.resolve(name: "sports")
            // ARTICLE end
            #expect(sports !== alsoSports && sports.engine === alsoSports.engine)
            #expect(throws: ResolutionError.self) { try container.resolve(Car.self, name: "family") }

            // ARTICLE: Runtime arguments
            container.register(Greeter.self) { (r, name: String, times: Int) in Greeter(name, times) }

            let greeter = try container.resolve(Greeter.self, arguments: "Ann", 3)
            // ARTICLE end
            #expect(greeter.name == "Ann" && greeter.times == 3)
            #expect(throws: ResolutionError.self, "the argument types are part of the key") {
                try container.resolve(Greeter.self, arguments: "Ann", 3.0)
            }
        }

        @Test func optionalLazyAndProvider() throws {
            let container = Container()
            container.register((any Engine).self) { _ in V8() }
            container.register(Request.self) { _ in Request() }
            // ARTICLE: Optional, lazy and repeated resolution
            final class Car {
                let engine: Lazy<any Engine>  // resolved on first use, then kept
                let requests: Provider<Request>  // resolved on every use
                init(engine: Lazy<any Engine>, requests: Provider<Request>) {
                    self.engine = engine
                    self.requests = requests
                }
            }

            container.register(Car.self) { r in Car(engine: try r.resolve(), requests: try r.resolve()) }
            let player = try container.resolve(MediaPlayer?.self)  // nil: no MediaPlayer is registered
            // ARTICLE end

            #expect(player == nil)
            let car = try container.resolve(Car.self)
            #expect(try car.engine.instance === car.engine.instance, "kept after the first use")
            #expect(try car.requests.instance !== car.requests.instance, "a new one on every use")
        }

        @Test func everyRegistrationOfAType() throws {
            let container = Container()
            container.register(GrammarRules.self) { _ in GrammarRules() }
            // ARTICLE: Every registration of a type: plugins
            container.register((any EditorPlugin).self, name: "spelling") { _ in SpellingPlugin() }
            container.register((any EditorPlugin).self, name: "grammar") { r in GrammarPlugin(rules: try r.resolve()) }
            container.register(Editor.self) { r in Editor(plugins: try r.resolveAll((any EditorPlugin).self)) }

            let editor = try container.resolve(Editor.self)  // plugins: spelling, then grammar
            // ARTICLE end
            #expect(editor.process("text") == "text [spelling] [grammar]")

            // ARTICLE: Every registration of a type: plugins
            let test = container.makeChild()
            test.register((any EditorPlugin).self, name: "grammar") { _ in NoGrammar() }  // replaces grammar
            test.register((any EditorPlugin).self, name: "emoji") { _ in EmojiPlugin() }  // added last
            // ARTICLE end
            #expect(try test.resolve(Editor.self).process("text") == "text [spelling] [emoji]")
            #expect(try container.resolve(Editor.self).process("text") == "text [spelling] [grammar]")
        }

        @Test func oneRegistrationSeveralTypes() throws {
            let container = Container()
            // ARTICLE: One registration, several types
            container.register(SQLiteStore.self) { _ in SQLiteStore() }
                .inObjectScope(.permanent)
                .implements(ReadingStore.self)
                .implements(WritingStore.self)

            let reader = try container.resolve(ReadingStore.self)  // the one SQLiteStore…
            let writer = try container.resolve(WritingStore.self)  // …shared by both
            // ARTICLE end
            #expect(reader === writer)
            #expect(reader === (try container.resolve(SQLiteStore.self)))
        }

        @Test func assemblies() throws {
            // ARTICLE: Group registrations in assemblies
            struct NetworkAssembly: Assembly {
                func assemble(container: Container) {
                    container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
                }
            }

            struct FeedAssembly: Assembly {
                func assemble(container: Container) {
                    container.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
                }
            }

            let app = Assembler([NetworkAssembly(), FeedAssembly()])
            let model = try app.resolver.resolve(FeedModel.self)
            // ARTICLE end
            #expect(model.client is LiveClient)
        }

        @Test func injectFromTheAmbientContainer() throws {
            // In a container of the test's own: the process-wide root is shared by every test.
            try Container.$current.withValue(Container()) { () throws in
                // ARTICLE: Inject from an ambient container
                final class CarViewModel {
                    @Inject var engine: any Engine  // resolved when the model is created
                    @LazyInject var exporter: PDFExporter  // resolved on first access
                }

                Container.current.register((any Engine).self) { _ in V8() }
                Container.current.register(PDFExporter.self) { _ in PDFExporter() }
                let model = CarViewModel()
                // ARTICLE end
                #expect(model.engine.horsepower == 450)
                #expect(try model.$exporter.instance === model.exporter, "resolved once, then kept")
            }
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/GettingStarted.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath))
