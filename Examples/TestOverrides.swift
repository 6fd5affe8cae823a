import Arbor

/// Test overrides with child containers: a weather app's container, and a "test" that swaps the network client in a
/// child. Graph-scoped models built from the child get the stub; the app's permanent services — even one first built
/// during the test — keep the live client, and the app's container is the same after the test as before.
enum TestOverrides {
    // MARK: The app's types

    protocol HTTPClient: AnyObject, Sendable {
        var name: String { get }
        func get(_ path: String) -> String
    }

    final class LiveHTTPClient: HTTPClient {
        let name = "live"
        func get(_ path: String) -> String { "sunny, 21 °C" }
    }

    final class StubHTTPClient: HTTPClient {
        let name = "stub"
        func get(_ path: String) -> String { "rain, 12 °C" }
    }

    /// The user's settings: one per app.
    final class Settings: @unchecked Sendable {
        let unit = "celsius"
    }

    /// A cache of forecasts the app shares: one per app, built with the app's own client.
    final class ForecastCache: @unchecked Sendable {
        let client: any HTTPClient
        init(client: any HTTPClient) { self.client = client }
    }

    /// What a screen shows: a new one per resolve.
    final class ForecastModel {
        let client: any HTTPClient
        let settings: Settings
        init(client: any HTTPClient, settings: Settings) {
            self.client = client
            self.settings = settings
        }
        func summary(for city: String) -> String {
            "\(city): \(client.get("/forecast/\(city)")) (\(settings.unit), via the \(client.name) client)"
        }
    }

    // MARK: Wiring

    static func makeAppContainer() -> Container {
        let app = Container()
        app.register((any HTTPClient).self) { _ in LiveHTTPClient() }.inObjectScope(.permanent)
        app.register(Settings.self) { _ in Settings() }.inObjectScope(.permanent)
        app.register(ForecastCache.self) { r in ForecastCache(client: try r.resolve()) }.inObjectScope(.permanent)
        app.register(ForecastModel.self) { r in ForecastModel(client: try r.resolve(), settings: try r.resolve()) }
        return app
    }

    static func run() throws {
        let app = makeAppContainer()
        let appClient = try app.resolve((any HTTPClient).self)
        let appSettings = try app.resolve(Settings.self)
        print("app:   \(try app.resolve(ForecastModel.self).summary(for: "Oslo"))")

        // The test: a child container with one override. Nothing is registered in the app's container.
        do {
            let test = app.makeChild()
            test.register((any HTTPClient).self) { _ in StubHTTPClient() }

            let model = try test.resolve(ForecastModel.self)
            print("test:  \(model.summary(for: "Oslo"))")
            try require(model.client is StubHTTPClient, "the test's model should use the stub")

            let settings = try test.resolve(Settings.self)
            print("       Settings is the app's instance: \(settings === appSettings)")
            try require(settings === appSettings, "the test should share the app's Settings")

            // The cache is permanent in the app, so the app builds it — with the app's client — even though the
            // test asked for it first. A child's override never ends up inside an instance the parent shares.
            let cache = try test.resolve(ForecastCache.self)
            print("       ForecastCache, first built during the test, uses the \(cache.client.name) client")
            try require(cache.client === appClient, "the app's cache should keep the app's client")
        }

        // After the test, the app is as it was.
        let client = try app.resolve((any HTTPClient).self)
        print("after: the app's client is still the \(client.name) one, the same instance: \(client === appClient)")
        print("       \(try app.resolve(ForecastModel.self).summary(for: "Oslo"))")
        try require(client === appClient, "the app's client should be untouched")
        try require(!(try app.resolve(ForecastModel.self).client is StubHTTPClient), "the app should not see the stub")
    }
}
