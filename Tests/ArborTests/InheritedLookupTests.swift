import Arbor
import Testing

private final class Service: @unchecked Sendable {
    let origin: String
    init(_ origin: String) { self.origin = origin }
}

/// A container remembers where it found an ancestor's registration; these tests change the tree afterwards and
/// check that every later resolve still finds the nearest registration.
@Suite struct InheritedLookupTests {
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
