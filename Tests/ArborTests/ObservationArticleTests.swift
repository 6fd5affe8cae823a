import Arbor
import Foundation
import Testing

// The Swift snippets of the article "Seeing what the container does"
// (Sources/Arbor/Arbor.docc/SeeingWhatTheContainerDoes.md), compiled and run like the README's (ReadmeTests.swift):
// each is copied between `// ARTICLE: <section>` and `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere`
// checks that the copies and the article agree. The tracing setup's copy is in ArborHummingbirdTests, which has the
// packages it needs.

private enum ObservationArticle {
    final class Database: Sendable {}
    final class ThumbnailCache: Sendable {}
    final class Screen: Sendable {
        let database: Database
        let thumbnails: ThumbnailCache
        init(database: Database, thumbnails: ThumbnailCache) {
            self.database = database
            self.thumbnails = thumbnails
        }
    }
    final class AppModel: Sendable {
        let screens: [Screen]
        init(screens: [Screen]) { self.screens = screens }
    }

    /// The app's wiring, with the thumbnail cache shared as it should be, or transient as in the article's launch.
    enum AppContainer {
        static func make(thumbnails scope: ObjectScope = .permanent) -> Container {
            let container = Container()
            container.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
            container.register(ThumbnailCache.self) { _ in ThumbnailCache() }.inObjectScope(scope)
            for name in ["feed", "saved", "search"] {
                container.register(Screen.self, name: name) { r in
                    Screen(database: try r.resolve(), thumbnails: try r.resolve())
                }
            }
            container.register(AppModel.self) { r in
                AppModel(screens: try ["feed", "saved", "search"].map { try r.resolve(Screen.self, name: $0) })
            }
            return container
        }
    }

    @Suite struct Tests {
        @Test func profileALaunch() throws {
            let container = AppContainer.make(thumbnails: .transient)
            // ARTICLE: Profile a launch
            let profile = try container.profile {
                _ = try container.resolve(AppModel.self)
            }
            print(profile)  // the table above

            let folder = FileManager.default.temporaryDirectory
            let svg = folder.appendingPathComponent("startup.svg")
            let trace = folder.appendingPathComponent("startup.json")
            try profile.flameGraphSVG().write(to: svg, atomically: true, encoding: .utf8)  // open in a browser
            try profile.chromeTraceJSON().write(to: trace, atomically: true, encoding: .utf8)  // ui.perfetto.dev
            // ARTICLE end
            let caches = profile.entries.first { $0.key == ServiceKey(ThumbnailCache.self) }
            #expect(caches?.count == 3, "transient: one thumbnail cache per screen")
            #expect(profile.instanceCount == 1 + 3 + 3 + 1)
            #expect(try String(contentsOf: svg, encoding: .utf8).hasPrefix("<?xml"))
            #expect(try String(contentsOf: trace, encoding: .utf8).contains("\"ThumbnailCache\""))
        }

        // ARTICLE: Keep it fixed
        @Test func launchBuildsOneThumbnailCache() throws {
            let container = AppContainer.make()
            let profile = try container.profile { _ = try container.resolve(AppModel.self) }
            let caches = profile.entries.first { $0.key == ServiceKey(ThumbnailCache.self) }
            #expect(caches?.count == 1, "\(profile)")
        }
        // ARTICLE end

        @Test func theFixedLaunchTestFailsOnTheMistake() throws {
            let container = AppContainer.make(thumbnails: .transient)
            let profile = try container.profile { _ = try container.resolve(AppModel.self) }
            let caches = profile.entries.first { $0.key == ServiceKey(ThumbnailCache.self) }
            #expect(caches?.count != 1)
        }

        @Test func watchEveryResolve() throws {
            let container = AppContainer.make()
            // ARTICLE: Watch every resolve
            final class BuildCounter: ResolutionObserver, @unchecked Sendable {
                private let lock = NSLock()  // resolves on several threads report at once
                private var counts: [ServiceKey: Int] = [:]

                func instanceBuilt(_ event: InstanceBuilt) {
                    lock.withLock { counts[event.key, default: 0] += 1 }
                }

                func count(of key: ServiceKey) -> Int { lock.withLock { counts[key] ?? 0 } }
            }

            let counter = BuildCounter()
            container.addObserver(counter)  // this container and its children, present and future
            _ = try container.resolve(AppModel.self)
            _ = try container.makeChild().resolve(AppModel.self)
            container.removeObserver(counter)
            print(counter.count(of: ServiceKey(Screen.self, name: "feed")))  // 2
            // ARTICLE end
            #expect(counter.count(of: ServiceKey(Screen.self, name: "feed")) == 2)
            #expect(counter.count(of: ServiceKey(Database.self)) == 1)
            _ = try container.resolve(AppModel.self)
            #expect(counter.count(of: ServiceKey(AppModel.self)) == 2, "removed: it sees no more resolves")
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/SeeingWhatTheContainerDoes.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath),
    // The tracing setup needs the traits Hummingbird and Tracing: its copy is compiled and run with them.
    alsoIn: ["Tests/ArborHummingbirdTests/RequestTracingTests.swift"])
