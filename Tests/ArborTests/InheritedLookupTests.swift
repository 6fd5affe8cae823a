import Arbor
import Foundation
import Testing

private final class Service: @unchecked Sendable {
    let origin: String
    init(_ origin: String) { self.origin = origin }
}

/// Resolves `Service` in its factory: a nested look-up.
private final class Holder: @unchecked Sendable {
    let service: Service
    init(_ service: Service) { self.service = service }
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

    // A nested look-up from a child that never registered the service's type takes the parent's cached answer
    // without the child's lock, and caches nothing for the child: the child's own registrations, added at any time,
    // are found from then on.

    @Test func aChildsNestedLookUpsFindTheParentsServicesAndThenTheChildsOwn() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        root.register(Holder.self) { r in Holder(try r.resolve()) }
        #expect(try root.resolve(Holder.self).service.origin == "root")  // The root's look-ups are cached.

        let child = root.makeChild()
        #expect(try child.resolve(Holder.self).service.origin == "root")
        #expect(try child.resolve(Holder.self).service.origin == "root")
        child.register(Service.self) { _ in Service("child") }
        #expect(try child.resolve(Holder.self).service.origin == "child")
        child.unregister(Service.self)
        #expect(try child.resolve(Holder.self).service.origin == "root")
        #expect(try root.resolve(Holder.self).service.origin == "root")
    }

    @Test func aChildRegisteringAnotherTypeStillFindsTheParentsServiceThroughANestedLookUp() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        root.register(Holder.self) { r in Holder(try r.resolve()) }
        let child = root.makeChild()
        child.register(Service.self, name: "named") { _ in Service("child, named") }
        child.register(String.self) { _ in "unrelated" }
        #expect(try child.resolve(Holder.self).service.origin == "root")
        #expect(try child.resolve(Service.self, name: "named").origin == "child, named")
    }

    @Test func aRegistrationOnAnotherThreadIsFoundByTheChildsNextResolve() throws {
        let root = Container()
        root.register(Service.self) { _ in Service("root") }
        root.register(Holder.self) { r in Holder(try r.resolve()) }
        let child = root.makeChild()
        #expect(try child.resolve(Holder.self).service.origin == "root")
        let registered = DispatchSemaphore(value: 0)
        Thread {
            child.register(Service.self) { _ in Service("child") }
            registered.signal()
        }.start()
        #expect(registered.wait(timeout: .now() + 10) == .success)
        #expect(try child.resolve(Holder.self).service.origin == "child")
    }
}
