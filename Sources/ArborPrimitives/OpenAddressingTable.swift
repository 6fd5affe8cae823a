/// Objects by key: an open-addressing hash table with linear probing, which never removes a single element.
///
/// A `Dictionary` hashes every key with SipHash, seeded per table; the element type chooses a cheaper hash here
/// (``HashTableElement/tableHash(of:)``). The slots live in memory the table manages itself, so a probe reads them
/// in place: no array buffer to retain, no key to copy (measured in Arbor: Array storage cost two retain/release
/// pairs per look-up). Each slot keeps its element's hash next to the element: a probe passes over other keys,
/// and growing the table moves every slot, without reading the elements themselves, each in memory of its own
/// (measured: those reads were a tenth of the cache misses of registering 1,000 services). An insert probes once:
/// the same probe finds the key's slot or the empty one where it goes.
///
/// The elements are held as retained `Unmanaged` references, so a probe copies a pointer, not a key and a
/// reference (measured: copying `(key, element)` slots was most of a registration's table work).
///
/// Safe because: the capacity is a power of two, at least twice the count (so a probe always reaches an empty
/// slot), and exactly `count` slots are occupied, each holding one +1 reference that the table owns and releases
/// once: when `insert` hands back the element it replaced, or when the table's storage goes away. Rehashing
/// moves the references as they are, clearing the old slots, so none is released twice or kept. No slot is
/// emptied while the table lives (`removeAll(where:)` builds a new table), so every element is reachable from its
/// hash's first slot without crossing an empty slot. The storage is a class that is never shared: the table is a
/// value with one owner that mutates it under its own lock and never copies it (a copy would share the slots).
/// `ARBOR_INTERNAL_CHECKS` checks the capacity, the count and every element's reachability after each change.
@usableFromInline
package struct OpenAddressingTable<Element: HashTableElement> {
    @usableFromInline typealias Slot = OpenAddressingSlot
    @usableFromInline typealias Storage = OpenAddressingStorage

    /// `nil` until the first insert: an empty table allocates nothing. (Measured: a child container that registers
    /// nothing took 669 heap bytes, 320 of them its table's 16 empty slots.)
    @usableFromInline var storage: Storage?
    @usableFromInline var _count = 0

    /// The capacity of the first storage: two elements fit (at most half the slots are used), the size of a request
    /// container's own registrations. (Measured: eight slots were 64 of a request child's heap bytes; the root's
    /// extra growth is one copy of two slots.)
    @usableFromInline static var initialCapacity: Int { 4 }

    @inlinable
    package init() {}

    /// How many elements the table holds.
    @inlinable
    package var count: Int { _count }

    /// How many slots the table has: a power of two, at least twice `count`.
    @inlinable
    package var capacity: Int { storage?.slotCount ?? 0 }

    /// The element stored under `key`, if any.
    @inlinable
    package subscript(key: Element.Key) -> Element? {
        slot(for: key).map { Self.element(in: $0.pointee)!.takeUnretainedValue() }
    }

    /// The element under `key`, unretained: the table keeps it as long as the table is not changed.
    @inlinable
    package func unretainedElement(for key: Element.Key) -> Unretained<Element>? {
        slot(for: key).map { Unretained(Self.element(in: $0.pointee)!) }
    }

    /// The slot holding `key`'s element, if any; valid until the table changes.
    @inlinable
    func slot(for key: Element.Key) -> UnsafeMutablePointer<Slot>? {
        // `storage?.…` reads through the optional without retaining the storage (binding it with `guard let`
        // retained and released it: a tenth of a registration).
        guard let slots = storage?.slots, let capacity = storage?.slotCount else { return nil }
        let mask = capacity - 1
        let hash = Element.tableHash(of: key)
        var index = hash & mask
        while let element = Self.element(in: slots[index]) {
            if slots[index].hash == hash, element._withUnsafeGuaranteedRef({ $0.key == key }) { return slots + index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Stores `element` under its key and returns the element it replaced, if any.
    @inlinable
    @discardableResult
    package mutating func insert(_ element: Element) -> Element? {
        if (_count + 1) * 2 > capacity { rehash(capacity: Swift.max(capacity * 2, Self.initialCapacity)) }
        defer { checkInvariants() }
        // One probe finds the key's slot, or the empty slot where it goes: no slot is ever emptied in between.
        let slots = storage!.slots
        let mask = storage!.slotCount - 1
        let key = element.key
        let hash = Element.tableHash(of: key)
        var index = hash & mask
        while let slot = Self.element(in: slots[index]) {
            if slots[index].hash == hash, slot._withUnsafeGuaranteedRef({ $0.key == key }) {
                slots[index].reference = Unmanaged.passRetained(element).toOpaque()
                return slot.takeRetainedValue()
            }
            index = (index + 1) & mask
        }
        slots[index] = Slot(reference: Unmanaged.passRetained(element).toOpaque(), hash: hash)
        _count += 1
        return nil
    }

    /// Removes the elements for which `shouldRemove` is true, and returns them. Builds the table anew from the
    /// elements it keeps.
    @inlinable
    package mutating func removeAll(where shouldRemove: (Element) throws -> Bool) rethrows -> [Element] {
        var removed: [Element] = []
        var kept: [Element] = []
        for element in elements {
            if try shouldRemove(element) { removed.append(element) } else { kept.append(element) }
        }
        guard !removed.isEmpty else { return [] }
        self = OpenAddressingTable()
        for element in kept { insert(element) }
        checkInvariants()
        return removed
    }

    /// Calls `body` with each element, in slot order, without collecting them first.
    @inlinable
    package func forEach(_ body: (Element) throws -> Void) rethrows {
        guard let storage else { return }
        let slots = storage.slots
        for index in 0..<storage.slotCount {
            if let element = Self.element(in: slots[index]) { try element._withUnsafeGuaranteedRef(body) }
        }
    }

    /// The elements, in slot order.
    @inlinable
    package var elements: [Element] {
        guard let storage else { return [] }
        return (0..<storage.slotCount).compactMap { Self.element(in: storage.slots[$0])?.takeUnretainedValue() }
    }

    /// The element a slot holds, as the table's element type.
    @inlinable
    @inline(__always)
    static func element(in slot: Slot) -> Unmanaged<Element>? {
        slot.reference.map { Unmanaged<Element>.fromOpaque($0) }
    }

    /// Moves every slot to a table of `capacity` slots. The references move as they are: no retain, no release,
    /// no array of the elements in between, and no element read (the slots know their hashes).
    @inlinable
    @inline(never)
    mutating func rehash(capacity: Int) {
        let storage = Storage.make(capacity: capacity)
        if let old = self.storage {
            let mask = capacity - 1
            for index in 0..<old.slotCount {
                let slot = old.slots[index]
                guard slot.reference != nil else { continue }
                var target = slot.hash & mask
                while storage.slots[target].reference != nil { target = (target + 1) & mask }
                storage.slots[target] = slot
                old.slots[index].reference = nil  // Now owned by the new table.
            }
        }
        self.storage = storage
        checkInvariants()
    }

    /// With `ARBOR_INTERNAL_CHECKS`: the capacity is a power of two and at least twice the count, exactly `count`
    /// slots are occupied, and each element is reachable from its hash's first slot. Reads only the slots.
    @inlinable
    @inline(__always)
    func checkInvariants() {
        #if ARBOR_INTERNAL_CHECKS
        if let storage {
            storage.checkInvariants(count: _count)
        } else {
            precondition(_count == 0, "an empty table counts \(_count) elements")
        }
        #endif
    }
}

/// A slot of an ``OpenAddressingTable``: a retained element reference, opaque, and its key's hash;
/// `reference == nil` for an empty slot. Not generic, so that making a table's slots needs no generic metadata
/// (measured: looking up the metadata of a slot type nested in the generic table was 330 instructions of every new
/// table, a tenth of registering an instance in a new child container).
@usableFromInline
package struct OpenAddressingSlot {
    @usableFromInline var reference: UnsafeMutableRawPointer?
    @usableFromInline var hash: Int

    @inlinable
    init(reference: UnsafeMutableRawPointer?, hash: Int) {
        self.reference = reference
        self.hash = hash
    }
}

/// The slots of an ``OpenAddressingTable``, with their count in the header: one allocation. It releases the
/// references the slots hold when it goes away.
@usableFromInline
package final class OpenAddressingStorage: ManagedBuffer<Int, OpenAddressingSlot> {
    @inlinable
    static func make(capacity: Int) -> OpenAddressingStorage {
        let buffer = unsafeDowncast(
            create(minimumCapacity: capacity) { _ in capacity }, to: OpenAddressingStorage.self)
        buffer.withUnsafeMutablePointerToElements { slots in
            slots.initialize(repeating: OpenAddressingSlot(reference: nil, hash: 0), count: capacity)
        }
        return buffer
    }

    /// The first slot. Valid while the storage lives: its elements never move.
    @inlinable
    var slots: UnsafeMutablePointer<OpenAddressingSlot> { withUnsafeMutablePointerToElements { $0 } }

    /// How many slots there are (the allocation may have room for more). Read through the pointer: the `header`
    /// property is a class's stored property, whose every read the runtime checks for exclusivity (measured: 8% of
    /// registering 1,000 services).
    @inlinable
    var slotCount: Int { withUnsafeMutablePointerToHeader { $0.pointee } }

    deinit {
        let count = slotCount
        withUnsafeMutablePointerToElements { slots in
            for index in 0..<count {
                if let reference = slots[index].reference { Unmanaged<AnyObject>.fromOpaque(reference).release() }
            }
            slots.deinitialize(count: count)
        }
    }
}

#if ARBOR_INTERNAL_CHECKS
extension OpenAddressingStorage {
    @usableFromInline
    func checkInvariants(count: Int) {
        precondition(
            slotCount > 0 && slotCount & (slotCount - 1) == 0, "table capacity \(slotCount) not a power of two")
        precondition(count * 2 <= slotCount, "table holds \(count) elements in \(slotCount) slots")
        let mask = slotCount - 1
        var occupied = 0
        for index in 0..<slotCount where slots[index].reference != nil {
            occupied += 1
            var probe = slots[index].hash & mask
            while probe != index {
                precondition(slots[probe].reference != nil, "table slot \(index) unreachable: slot \(probe) is empty")
                probe = (probe + 1) & mask
            }
        }
        precondition(occupied == count, "table counts \(count) elements but \(occupied) slots are occupied")
    }
}
#endif
