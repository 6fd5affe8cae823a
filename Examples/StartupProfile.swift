import Arbor
import Foundation

/// Profiles the launch of a news app: which registrations cost the most, where the time went, as text, as a flame
/// graph and as a trace for Perfetto.
///
/// The factories stand in for real work with sleeps of known lengths — opening a database (25 ms), loading feature
/// flags (8 ms), warming an image cache (6 ms per screen's thumbnails), so the profile has something to find: the
/// database, opened once but on the launch's critical path, and a thumbnail cache registered `.transient` by mistake,
/// built anew for every screen.
enum StartupProfile {
    // MARK: The app's types

    final class Database: Sendable {}
    final class FeatureFlags: Sendable {}
    final class Logger: Sendable {}
    final class HTTPClient: Sendable {
        let logger: Logger
        init(logger: Logger) { self.logger = logger }
    }
    protocol NewsAPI: Sendable {}
    final class LiveNewsAPI: NewsAPI {
        let http: HTTPClient
        init(http: HTTPClient) { self.http = http }
    }
    final class ArticleStore: Sendable {
        let database: Database
        let api: any NewsAPI
        init(database: Database, api: any NewsAPI) {
            self.database = database
            self.api = api
        }
    }
    final class ThumbnailCache: Sendable {}
    final class Screen: @unchecked Sendable {
        let store: ArticleStore
        let thumbnails: ThumbnailCache
        var analytics: Analytics?
        init(store: ArticleStore, thumbnails: ThumbnailCache) {
            self.store = store
            self.thumbnails = thumbnails
        }
    }
    final class Analytics: Sendable {
        let flags: FeatureFlags
        init(flags: FeatureFlags) { self.flags = flags }
    }
    final class AppModel: Sendable {
        let feed: Screen
        let saved: Screen
        let search: Screen
        init(feed: Screen, saved: Screen, search: Screen) {
            self.feed = feed
            self.saved = saved
            self.search = search
        }
    }

    /// Stands in for work a factory does.
    static func work(milliseconds: Int) {
        Thread.sleep(forTimeInterval: Double(milliseconds) / 1_000)
    }

    // MARK: Wiring

    static func makeContainer() -> Container {
        let container = Container()
        container.register(Database.self) { _ in
            work(milliseconds: 25)
            return Database()
        }
        .inObjectScope(.permanent)
        container.register(FeatureFlags.self) { _ in
            work(milliseconds: 8)
            return FeatureFlags()
        }
        .inObjectScope(.permanent)
        container.register(Logger.self) { _ in Logger() }.inObjectScope(.permanent)
        container.register(HTTPClient.self) { r in
            work(milliseconds: 2)
            return HTTPClient(logger: try r.resolve())
        }
        .inObjectScope(.permanent)
        container.register((any NewsAPI).self) { r in LiveNewsAPI(http: try r.resolve()) }.inObjectScope(.permanent)
        container.register(ArticleStore.self) { r in
            ArticleStore(database: try r.resolve(), api: try r.resolve())
        }
        .inObjectScope(.permanent)
        // The mistake the profile finds: meant to be shared, registered transient, so every screen warms its own.
        container.register(ThumbnailCache.self) { _ in
            work(milliseconds: 6)
            return ThumbnailCache()
        }
        .inObjectScope(.transient)
        container.register(Analytics.self) { r in
            work(milliseconds: 1)
            return Analytics(flags: try r.resolve())
        }
        .inObjectScope(.permanent)
        for name in ["feed", "saved", "search"] {
            container.register(Screen.self, name: name) { r in
                Screen(store: try r.resolve(), thumbnails: try r.resolve())
            }
            .initCompleted { r, screen in screen.analytics = try r.resolve() }
        }
        container.register(AppModel.self) { r in
            AppModel(
                feed: try r.resolve(Screen.self, name: "feed"), saved: try r.resolve(Screen.self, name: "saved"),
                search: try r.resolve(Screen.self, name: "search"))
        }
        return container
    }

    static func run() throws {
        let app = makeContainer()
        let profile = try app.profile {
            _ = try app.resolve(AppModel.self)
        }
        print(profile)

        let thumbnails = profile.entries.first { $0.key == ServiceKey(ThumbnailCache.self) }
        try require(thumbnails?.count == 3, "the profile counts one thumbnail cache per screen")
        try require(
            (thumbnails?.selfTime ?? .zero) >= .milliseconds(18), "three thumbnail caches take at least 3 × 6 ms")

        let directory =
            ProcessInfo.processInfo.environment["PROFILE_OUTPUT"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("arbor-startup-profile")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let svg = directory.appendingPathComponent("startup.svg")
        let trace = directory.appendingPathComponent("startup.json")
        try profile.flameGraphSVG().write(to: svg, atomically: true, encoding: .utf8)
        try profile.chromeTraceJSON().write(to: trace, atomically: true, encoding: .utf8)
        print()
        print("flame graph (open in a browser): \(svg.path)")
        print("trace (open in ui.perfetto.dev):  \(trace.path)")
    }
}
