import Arbor
import Foundation
import Testing

// `resetInstance(of:name:)` drops the instance one registration keeps in the container it is called on, with its
// `onRelease` hooks; the next resolve builds a new one, and everything else stays.

private final class RSession: Sendable {}
private final class RDatabase: Sendable {}
private final class RCache: Sendable {}

private final class RReleases: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    func record(_ name: String) { lock.withLock { names.append(name) } }
    var values: [String] { lock.withLock { names } }
}

@Suite struct ResetInstanceTests {
    @Test func aPermanentInstanceIsReleasedAndBuiltAgainAndTheOthersStay() throws {
        let container = Container()
        let releases = RReleases()
        container.register(RSession.self) { _ in RSession() }
            .inObjectScope(.permanent)
            .onRelease { _ in releases.record("session") }
        container.register(RDatabase.self) { _ in RDatabase() }
            .inObjectScope(.permanent)
            .onRelease { _ in releases.record("database") }
        let session = try container.resolve(RSession.self)
        let database = try container.resolve(RDatabase.self)

        container.resetInstance(of: RSession.self)
        #expect(releases.values == ["session"])
        #expect(try container.resolve(RSession.self) !== session)
        #expect(try container.resolve(RDatabase.self) === database)
        container.resetInstance(of: RSession.self)
        #expect(releases.values == ["session", "session"], "the new instance is released in its turn")
    }

    @Test func onlyTheNamedRegistrationIsReset() throws {
        let container = Container()
        container.register(RDatabase.self, name: "primary") { _ in RDatabase() }.inObjectScope(.permanent)
        container.register(RDatabase.self, name: "replica") { _ in RDatabase() }.inObjectScope(.permanent)
        let primary = try container.resolve(RDatabase.self, name: "primary")
        let replica = try container.resolve(RDatabase.self, name: "replica")
        container.resetInstance(of: RDatabase.self, name: "replica")
        #expect(try container.resolve(RDatabase.self, name: "primary") === primary)
        #expect(try container.resolve(RDatabase.self, name: "replica") !== replica)
    }

    @Test func aChildNeverResetsWhatItsParentHolds() throws {
        let app = Container()
        app.register(RSession.self) { _ in RSession() }.inObjectScope(.permanent)
        let shared = try app.resolve(RSession.self)
        let test = app.makeChild()
        test.resetInstance(of: RSession.self)
        #expect(try test.resolve(RSession.self) === shared)
        app.resetInstance(of: RSession.self)
        #expect(try test.resolve(RSession.self) !== shared, "reset where it is held, every descendant sees it")
    }

    @Test func aChildResetsItsOwnPerContainerInstanceOnly() throws {
        let app = Container()
        let releases = RReleases()
        app.register(RCache.self) { _ in RCache() }
            .inObjectScope(.perContainer)
            .onRelease { _ in releases.record("cache") }
        let first = app.makeChild()
        let second = app.makeChild()
        let firstCache = try first.resolve(RCache.self)
        let secondCache = try second.resolve(RCache.self)
        let appCache = try app.resolve(RCache.self)

        first.resetInstance(of: RCache.self)
        #expect(releases.values == ["cache"])
        #expect(try first.resolve(RCache.self) !== firstCache)
        #expect(try second.resolve(RCache.self) === secondCache)
        #expect(try app.resolve(RCache.self) === appCache)
    }

    @Test func aForwardedTypeResetsTheRegistrationItForwardsTo() throws {
        let container = Container()
        container.register(RDatabase.self) { _ in RDatabase() }
            .inObjectScope(.permanent)
            .implements(AnyObject.self, name: "store")
        let database = try container.resolve(RDatabase.self)
        container.resetInstance(of: AnyObject.self, name: "store")
        #expect(try container.resolve(RDatabase.self) !== database)
    }

    @Test func aWeakInstanceIsForgotten() throws {
        let container = Container()
        container.register(RCache.self) { _ in RCache() }.inObjectScope(.weak)
        let held = try container.resolve(RCache.self)
        container.resetInstance(of: RCache.self)
        #expect(try container.resolve(RCache.self) !== held)
    }
}
