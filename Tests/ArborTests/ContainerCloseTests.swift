import Arbor
import Foundation
import Testing

private final class Resource: @unchecked Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

private final class Client: @unchecked Sendable {
    let resource: Resource
    init(resource: Resource) { self.resource = resource }
}

@Suite struct ContainerCloseTests {
    /// A session container whose permanent services record their release.
    private func session(of parent: Container, recording events: Recorder) -> Container {
        let session = parent.makeChild()
        session.register(Resource.self) { _ in Resource("resource") }
            .inObjectScope(.permanent)
            .onRelease { events.record("released \($0.name)") }
        session.register(Client.self) { r in Client(resource: try r.resolve()) }
            .inObjectScope(.permanent)
            .onRelease { _ in events.record("released client") }
        return session
    }

    @Test func closeRunsReleaseHooksNewestFirstAndOnlyOnce() throws {
        let events = Recorder()
        let session = session(of: Container(), recording: events)
        _ = try session.resolve(Client.self)  // builds the resource first, then the client

        session.close()
        #expect(events.events == ["released client", "released resource"])
        session.close()
        #expect(events.events.count == 2)
        #expect(session.isClosed)
    }

    @Test func resolvingFromAClosedContainerThrowsAClearError() throws {
        let session = Container().makeChild()
        session.register(Resource.self) { _ in Resource("r") }
        session.close()

        let error = try #require(resolutionError { try session.resolve(Resource.self) })
        #expect(error.kind == .containerClosed)
        #expect(error.description.contains("closed"))
        #expect(error.description.contains("Resource"))
    }

    @Test func closingAContainerClosesItsDescendantsButNotItsAncestors() throws {
        let events = Recorder()
        let app = Container()
        app.register(Resource.self, name: "app") { _ in Resource("app") }
            .inObjectScope(.permanent)
            .onRelease { events.record("released \($0.name)") }
        let session = app.makeChild()
        let screen = session.makeChild()
        screen.register(Resource.self) { _ in Resource("screen") }
            .inObjectScope(.permanent)
            .onRelease { events.record("released \($0.name)") }
        let appResource = try screen.resolve(Resource.self, name: "app")
        _ = try screen.resolve(Resource.self)

        session.close()
        #expect(events.events == ["released screen"])
        #expect(screen.isClosed)
        #expect(!app.isClosed)
        #expect(try app.resolve(Resource.self, name: "app") === appResource)
        #expect(session.makeChild().isClosed)
    }

    @Test func onlyHeldInstancesAreReleased() throws {
        let events = Recorder()
        let session = Container().makeChild()
        session.register(Resource.self, name: "never") { _ in Resource("never") }
            .inObjectScope(.permanent)
            .onRelease { events.record("released \($0.name)") }
        session.register(Resource.self, name: "transient") { _ in Resource("transient") }
            .inObjectScope(.transient)
            .onRelease { events.record("released \($0.name)") }
        _ = try session.resolve(Resource.self, name: "transient")

        session.close()
        #expect(events.events.isEmpty)
    }

    @Test func resetReplaceAndUnregisterReleaseTheHeldInstance() throws {
        let events = Recorder()
        let container = Container()
        func register() {
            container.register(Resource.self) { _ in Resource("r") }
                .inObjectScope(.permanent)
                .onRelease { events.record("released \($0.name)") }
        }
        register()
        _ = try container.resolve(Resource.self)
        container.resetObjectScope(.permanent)
        #expect(events.events == ["released r"])

        _ = try container.resolve(Resource.self)
        register()  // replaces the registration
        #expect(events.events.count == 2)

        _ = try container.resolve(Resource.self)
        container.unregister(Resource.self)
        #expect(events.events.count == 3)
    }

    @Test func onReleaseAddedBeforeTheScopeStillApplies() throws {
        let events = Recorder()
        let session = Container().makeChild()
        session.register(Resource.self) { _ in Resource("r") }
            .onRelease { events.record("released \($0.name)") }
            .inObjectScope(.permanent)
        _ = try session.resolve(Resource.self)
        session.close()
        #expect(events.events == ["released r"])
    }

    @Test func closingWhileOtherThreadsResolveReleasesEveryInstanceOnce() throws {
        let released = Counter()
        let built = Counter()
        for _ in 0..<20 {
            let session = Container().makeChild()
            session.register(Resource.self) { _ in
                built.increment()
                usleep(200)
                return Resource("r")
            }
            .inObjectScope(.permanent)
            .onRelease { _ in released.increment() }

            let group = DispatchGroup()
            for _ in 0..<4 {
                DispatchQueue.global().async(group: group) {
                    _ = try? session.resolve(Resource.self)
                }
            }
            usleep(100)
            session.close()
            #expect(group.wait(timeout: .now() + 20) == .success)
            // Whatever was built before or during close is released, exactly once; nothing is built after.
            #expect(released.value == built.value)
            #expect(throws: ResolutionError.self) { try session.resolve(Resource.self) }
        }
    }
}
