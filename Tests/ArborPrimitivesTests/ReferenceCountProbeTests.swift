import ArborPrimitives
import Testing

private final class RPObject {}

private final class RPWeakHolder {
    weak var object: RPObject?
    init(_ object: RPObject) { self.object = object }
}

private final class RPUnownedHolder {
    unowned let object: RPObject
    init(_ object: RPObject) { self.object = object }
}

/// The probe sees `weak` and `unowned` references — which `isKnownUniquelyReferenced` does not — and errs only one
/// way: a weak reference that is gone leaves a side table behind, and the probe still reports one.
@Suite struct ReferenceCountProbeTests {
    @Test func aSolelyOwnedObjectHasNone() {
        let object = RPObject()
        #expect(!ReferenceCountProbe.hasUnownedOrWeakReferences(object))
        let counts = ReferenceCountProbe.references(of: object)
        #expect(counts.unowned == 1 && counts.weak <= 1)
    }

    /// `isOnlyReference` sees every kind of reference: another strong one, an unowned one, a weak one.
    @Test func anObjectIsOnlyReferencedOnceWhenNothingElseRefersToIt() {
        let object = RPObject()
        let address = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        #expect(ReferenceCountProbe.isOnlyReference(address))
        do {
            let another = object
            #expect(!ReferenceCountProbe.isOnlyReference(address))
            withExtendedLifetime(another) {}
        }
        do {
            let holder = RPUnownedHolder(object)
            #expect(!ReferenceCountProbe.isOnlyReference(address))
            withExtendedLifetime(holder) {}
        }
        #expect(ReferenceCountProbe.isOnlyReference(address), "the unowned reference is gone")
        do {
            let holder = RPWeakHolder(object)
            #expect(!ReferenceCountProbe.isOnlyReference(address))
            withExtendedLifetime(holder) {}
        }
        #expect(!ReferenceCountProbe.isOnlyReference(address), "the weak reference left a side table: the safe side")
        withExtendedLifetime(object) {}
    }

    @Test func strongReferencesAreNotItsBusiness() {
        let object = RPObject()
        let more = [object, object, object]
        #expect(!ReferenceCountProbe.hasUnownedOrWeakReferences(object))
        #expect(ReferenceCountProbe.references(of: object).strong >= 4)
        withExtendedLifetime(more) {}
    }

    @Test func anUnownedReferenceIsSeenWhileItExists() {
        let object = RPObject()
        var holder: RPUnownedHolder? = RPUnownedHolder(object)
        #expect(ReferenceCountProbe.hasUnownedOrWeakReferences(object))
        #expect(ReferenceCountProbe.references(of: object).unowned == 2)
        withExtendedLifetime(holder) {}
        holder = nil
        #expect(!ReferenceCountProbe.hasUnownedOrWeakReferences(object), "unowned counts live in the header")
    }

    @Test func aWeakReferenceIsSeenAndItsSideTableErsOnTheSafeSide() {
        let object = RPObject()
        var holder: RPWeakHolder? = RPWeakHolder(object)
        #expect(ReferenceCountProbe.hasUnownedOrWeakReferences(object))
        #expect(ReferenceCountProbe.references(of: object).weak == 2)
        #expect(holder?.object === object)
        holder = nil
        // The runtime's count says the weak reference is gone; the probe, reading the header, still sees the side
        // table: it reports a reference, which only makes its caller stop reusing the object.
        #expect(ReferenceCountProbe.references(of: object).weak == 1)
        #expect(ReferenceCountProbe.hasUnownedOrWeakReferences(object))
    }
}
