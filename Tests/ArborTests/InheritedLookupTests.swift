import Arbor
import Testing

private final class Service: @unchecked Sendable {
    let origin: String
    init(_ origin: String) { self.origin = origin }
}

/// A thread remembers where a look-up found an ancestor's registration, for the container it started in and for
/// every ancestor on the way; these tests change the tree afterwards and check that every later resolve still finds
/// the nearest registration.
@Suite struct InheritedLookupTests {
    @Test func aNewChildFindsWhatTheParentFoundAndSeesTheParentsLaterChanges() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("first") }
        #expect(try root.resolve(Service.self).origin == "first")  // The root's look-up is remembered.

        let child = root.makeChild()
        #expect(try child.resolve(Service.self).origin == "first")
        root.register(Service.self) { _ in Service("second") }
        #expect(try child.resolve(Service.self).origin == "second")
        #expect(try root.makeChild().resolve(Service.self).origin == "second")
    }

    @Test func aRegistrationInTheMiddleHidesWhatTheMiddleFoundBefore() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        let middle = root.makeChild()
        #expect(try middle.resolve(Service.self).origin == "root")  // The middle's look-up, found in the root.

        let leaf = middle.makeChild()
        #expect(try leaf.resolve(Service.self).origin == "root")
        middle.register(Service.self) { _ in Service("middle") }
        #expect(try leaf.resolve(Service.self).origin == "middle")
        #expect(try middle.makeChild().resolve(Service.self).origin == "middle")
        root.register(Service.self) { _ in Service("root again") }
        #expect(try leaf.resolve(Service.self).origin == "middle")
    }

    @Test func aReRegistrationInTheAncestorIsSeenByADescendantThatResolvedItBefore() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("first") }
        let leaf = root.makeChild().makeChild()
        #expect(try leaf.resolve(Service.self).origin == "first")

        root.register(Service.self) { _ in Service("second") }
        #expect(try leaf.resolve(Service.self).origin == "second")
    }

    @Test func aRegistrationAddedBetweenHidesTheFartherOne() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        let middle = root.makeChild()
        let leaf = middle.makeChild()
        #expect(try leaf.resolve(Service.self).origin == "root")

        middle.register(Service.self) { _ in Service("middle") }
        #expect(try leaf.resolve(Service.self).origin == "middle")

        middle.unregister(Service.self)
        #expect(try leaf.resolve(Service.self).origin == "root")
    }

    @Test func reconfiguringAnAncestorsRegistrationReachesDescendants() throws {
        let root = Container()
        let registration = root.register(Service.self) { _ in Service("root") }
        let leaf = root.makeChild()
        #expect(try leaf.resolve(Service.self) !== leaf.resolve(Service.self))

        registration.inObjectScope(.permanent)
        #expect(try leaf.resolve(Service.self) === leaf.resolve(Service.self))
    }

    @Test func removingAnAncestorsRegistrationMakesItMissingForDescendants() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        let leaf = root.makeChild().makeChild().makeChild()
        _ = try leaf.resolve(Service.self)

        root.removeAll()
        let error = try #require(resolutionError { try leaf.resolve(Service.self) })
        #expect(error.kind == .notRegistered)
    }

    @Test func aChildMadeLaterStartsWithoutTheCache() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        let first = root.makeChild()
        _ = try first.resolve(Service.self)
        root.register(Service.self) { _ in Service("again") }
        let second = root.makeChild()
        #expect(try second.resolve(Service.self).origin == "again")
        #expect(try first.resolve(Service.self).origin == "again")
    }
}
