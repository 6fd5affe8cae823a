import Arbor
import Testing

private protocol Reading: AnyObject {}
private protocol Writing: AnyObject {}
private protocol Greeting { var text: String { get } }
private final class Store: Reading, Writing {}
private struct Greeter: Greeting {
    let text: String
}

@Suite struct TypeForwardingTests {
    @Test func aPermanentRegistrationForwardedToTwoProtocolsYieldsOneInstance() throws {
        let container = Container()
        container.register(Store.self) { _ in Store() }
            .inObjectScope(.permanent)
            .implements((any Reading).self)
            .implements((any Writing).self)

        let reader = try container.resolve((any Reading).self)
        let writer = try container.resolve((any Writing).self)
        let store = try container.resolve(Store.self)
        #expect(reader === store)
        #expect(writer === store)
    }

    @Test func scopeSetAfterImplementsStillApplies() throws {
        let container = Container()
        container.register(Store.self) { _ in Store() }
            .implements((any Reading).self)
            .inObjectScope(.permanent)
        #expect(try container.resolve((any Reading).self) === container.resolve(Store.self))
    }

    @Test func aTransientRegistrationForwardsNewInstances() throws {
        let container = Container()
        container.register(Store.self) { _ in Store() }.inObjectScope(.transient).implements((any Reading).self)
        #expect(try container.resolve((any Reading).self) !== container.resolve((any Reading).self))
    }

    @Test func graphScopeIsSharedThroughTheForwardWithinOneResolution() throws {
        final class Pair {
            let reader: any Reading
            let store: Store
            init(reader: any Reading, store: Store) {
                self.reader = reader
                self.store = store
            }
        }
        let container = Container()
        container.register(Store.self) { _ in Store() }.implements((any Reading).self)
        container.register(Pair.self) { r in Pair(reader: try r.resolve(), store: try r.resolve()) }
        let pair = try container.resolve(Pair.self)
        #expect(pair.reader === pair.store)
        #expect(try container.resolve(Pair.self).store !== pair.store)
    }

    @Test func forwardsCanBeNamedAndKeepTheArgumentTypes() throws {
        let container = Container()
        container.register(Greeter.self) { (_, name: String) in Greeter(text: "Hello, \(name)") }
            .implements((any Greeting).self, name: "friendly")

        let greeting = try container.resolve((any Greeting).self, name: "friendly", arguments: "Ann")
        #expect(greeting.text == "Hello, Ann")
        #expect(container.isRegistered((any Greeting).self, name: "friendly"))
        #expect(!container.isRegistered((any Greeting).self))
        #expect(throws: ResolutionError.self) { try container.resolve((any Greeting).self, name: "friendly") }
    }

    @Test func aFailedCastIsATypeMismatchNamingBothTypes() throws {
        let container = Container()
        container.register(Store.self) { _ in Store() }.implements((any Greeting).self)

        let error = try #require(throws: ResolutionError.self) { try container.resolve((any Greeting).self) }
        guard case .typeMismatch = error.reason else {
            Issue.record("expected typeMismatch, got \(error.reason)")
            return
        }
        #expect(error.key == ServiceKey((any Greeting).self))
        #expect(error.description.contains("Store"))
        #expect(error.description.contains("Greeting"))
    }

    @Test func aFailedCastNamesTheForwardOnceInThePath() async throws {
        let container = Container()
        container.register(Store.self) { _ in Store() }.implements((any Greeting).self, name: "greeting")
        container.register(Greeter.self) { r in
            Greeter(text: try r.resolve((any Greeting).self, name: "greeting").text)
        }
        let forward = ServiceKey((any Greeting).self, name: "greeting")

        let topLevel = try #require(throws: ResolutionError.self) {
            try container.resolve((any Greeting).self, name: "greeting")
        }
        #expect(topLevel.path == [forward])
        let nested = try #require(throws: ResolutionError.self) { try container.resolve(Greeter.self) }
        #expect(nested.path == [ServiceKey(Greeter.self), forward])
        let nestedAsync = await #expect(throws: ResolutionError.self) { try await container.resolve(Greeter.self) }
        #expect(nestedAsync?.path == [ServiceKey(Greeter.self), forward])
        #expect(
            topLevel.description.contains(
                "It forwards to a registration whose instance, of type Store, is not of type Greeting."))
    }

    @Test func unregisteringTheTargetRemovesItsForwards() throws {
        let container = Container()
        container.register(Store.self) { _ in Store() }.implements((any Reading).self)
        container.unregister(Store.self)
        #expect(!container.isRegistered((any Reading).self))
        let error = try #require(throws: ResolutionError.self) { try container.resolve((any Reading).self) }
        guard case .notRegistered = error.reason else {
            Issue.record("expected notRegistered, got \(error.reason)")
            return
        }
    }

    @Test func aForwardResolvesItsOwnRegistrationEvenWhenAChildOverridesTheTarget() throws {
        let parent = Container()
        let original = Store()
        parent.register(Store.self, instance: original).implements((any Reading).self)
        let child = parent.makeChild()
        child.register(Store.self) { _ in Store() }
        #expect(try child.resolve((any Reading).self) === original)
        #expect(try child.resolve(Store.self) !== original)
    }

    @Test func printingAContainerShowsAForwardWithTheScopeOfItsTarget() {
        let container = Container()
        container.register(Store.self) { _ in Store() }
            .inObjectScope(.permanent)
            .implements((any Reading).self)
        let printed = String(describing: container)
        #expect(printed.contains("Store [permanent]"))
        #expect(printed.contains("Reading [permanent, forwards to Store]"), "printed:\n\(printed)")
        #expect(!printed.contains("transient"))
    }
}
