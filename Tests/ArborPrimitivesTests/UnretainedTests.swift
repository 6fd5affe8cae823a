import ArborPrimitives
import Testing

private final class Node {
    let name: String
    init(_ name: String) { self.name = name }
}

@Suite struct UnretainedTests {
    @Test func identity() {
        let first = Node("a")
        let second = Node("a")
        let reference = Unretained(first)
        #expect(reference == Unretained(first))
        #expect(reference != Unretained(second))
        #expect(reference.refers(to: first))
        #expect(!reference.refers(to: second))
        #expect(reference.hashValue == Unretained(first).hashValue)
        #expect(Set([reference, Unretained(first), Unretained(second)]).count == 2)
        #expect(reference.object === first)
        #expect(reference.unmanaged.takeUnretainedValue() === first)
        #expect(Unretained(Unmanaged.passUnretained(second)).object === second)
    }

    @Test func opaqueRoundTrip() {
        let node = Node("n")
        let reference = Unretained(node)
        let pointer = reference.toOpaque()
        #expect(pointer == Unmanaged.passUnretained(node).toOpaque())
        let back = Unretained<Node>(fromOpaque: pointer)
        #expect(back == reference)
        #expect(back.object === node)
    }

    @Test func borrow() throws {
        struct Failure: Error {}
        let node = Node("borrowed")
        let reference = Unretained(node)
        let name = reference.withObject { object -> String in
            #expect(object === node)
            return object.name
        }
        #expect(name == "borrowed")
        #expect(throws: Failure.self) { try reference.withObject { _ in throw Failure() } }
    }

    /// A normal build keeps no strong reference: the object stays uniquely referenced, and it is freed while the
    /// `Unretained` still exists. With `ARBOR_INTERNAL_CHECKS` the reference keeps the object alive instead.
    @Test func retainsOnlyWithInternalChecks() {
        var node = Node("owner")
        weak let watcher = node
        let reference = Unretained(node)
        #expect(isKnownUniquelyReferenced(&node) == !arborInternalChecksEnabled)
        node = Node("other")
        #expect((watcher == nil) == !arborInternalChecksEnabled)
        withExtendedLifetime(reference) {}
        let expectedWords = arborInternalChecksEnabled ? 2 : 1
        #expect(MemoryLayout<Unretained<Node>>.size == expectedWords * MemoryLayout<Int>.size)
        #expect(MemoryLayout<Unretained<Node>?>.size == MemoryLayout<Unretained<Node>>.size)
    }

    /// `retainedInChecks: false` never keeps the object, in any build; `init(retaining:)` copies such a reference into
    /// one that does, with internal checks.
    @Test func aReferenceMadeNotToRetainNeverRetainsAndACopyRetainingMayAgain() {
        var node = Node("owner")
        weak let watcher = node
        let never = Unretained(node, retainedInChecks: false)
        #expect(isKnownUniquelyReferenced(&node))
        #expect(never.object === node)
        #expect(never.withObject { $0.name } == "owner")
        do {
            let retaining = Unretained(retaining: never)
            #expect(retaining == never)
            #expect(isKnownUniquelyReferenced(&node) == !arborInternalChecksEnabled)
            withExtendedLifetime(retaining) {}
        }
        node = Node("other")
        #expect(watcher == nil, "nothing but the variable kept it")
        withExtendedLifetime(never) {}
    }
}

/// An object whose deinit reads an unretained reference to itself, as a container's parent may while the child's
/// deinit waits for the parent's lock.
private final class Deinitializing {
    let onDeinit: (Unretained<Deinitializing>) -> Void
    init(onDeinit: @escaping (Unretained<Deinitializing>) -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit(Unretained(self, retainedInChecks: false)) }
}

private final class SharedNode: Sendable {}

@Suite struct RetainedIfAliveTests {
    @Test func aLiveObjectIsRetained() {
        let node = Node("alive")
        let reference = Unretained(node, retainedInChecks: false)
        let before = ReferenceCountProbe.references(of: node).strong
        var retained = reference.retainedIfAlive()
        #expect(retained === node)
        #expect(ReferenceCountProbe.references(of: node).strong == before + 1)
        retained = nil
        #expect(ReferenceCountProbe.references(of: node).strong == before)
        withExtendedLifetime(retained) {}
    }

    /// Once the deinit has begun, no strong reference is made: one would outlive the object.
    @Test func anObjectInItsDeinitIsNot() {
        let seen = Protected.make([Bool]())
        var object: Deinitializing? = Deinitializing { reference in
            let found = reference.retainedIfAlive()
            seen.withLock { $0.append(found != nil) }
        }
        #expect(object != nil)
        object = nil
        #expect(seen.withLock { $0 } == [false])
    }

    /// The same object, read many times from two threads while it is alive, keeps an exact count.
    @Test func balancedUnderContention() async {
        let node = SharedNode()
        let reference = Unretained(node, retainedInChecks: false)
        let before = ReferenceCountProbe.references(of: node).strong
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var found = 0
                    for _ in 0..<10_000 where reference.retainedIfAlive() != nil { found += 1 }
                    return found
                }
            }
            for await found in group { #expect(found == 10_000) }
        }
        #expect(ReferenceCountProbe.references(of: node).strong == before)
    }
}
