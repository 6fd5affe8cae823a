/// The registrations of one container, by key: an open-addressing hash table with linear probing.
///
/// A `Dictionary` hashes every key with SipHash, seeded per table; for a key made of two type pointers and a
/// name that is usually `nil`, that hashing cost more than the rest of a resolve's look-up (measured: about 300
/// instructions of a 600-instruction look-up). Type metadata pointers are unique and well spread, so a
/// multiplicative mix of them is a good hash; a name, when there is one, adds its standard hash.
///
/// The slots live in memory the table manages itself, so a probe reads them in place: no array buffer to
/// retain, no key to copy (measured: Array storage cost two retain/release pairs per look-up). Each slot keeps its
/// key's hash next to the entry: a probe passes over other keys, and growing the table moves every slot, without
/// reading the entries themselves, each in memory of its own (measured: those reads were a tenth of the cache
/// misses of registering 1,000 services). The table is mutated only under its container's lock and never copied.
struct ServiceTable {
    /// An entry, retained, as `Unmanaged` so a probe copies a pointer, not a key and a reference (measured: copying
    /// `(key, entry)` slots was most of a registration's table work); and its key's hash.
    private struct Slot {
        var entry: Unmanaged<ServiceEntry>?
        var hash = 0
    }

    private final class Storage {
        let slots: UnsafeMutablePointer<Slot>
        let capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            slots = .allocate(capacity: capacity)
            slots.initialize(repeating: Slot(), count: capacity)
        }

        deinit {
            for index in 0..<capacity { slots[index].entry?.release() }
            slots.deallocate()
        }
    }

    private var storage = Storage(capacity: 16)
    private(set) var count = 0

    subscript(key: ServiceKey) -> ServiceEntry? {
        guard let index = index(of: key) else { return nil }
        return storage.slots[index].entry!.takeUnretainedValue()
    }

    /// The entry under `key`, unretained: the table keeps it while its lock is held.
    func unretainedEntry(for key: ServiceKey) -> Unmanaged<ServiceEntry>? {
        guard let index = index(of: key) else { return nil }
        return storage.slots[index].entry
    }

    /// The slot holding `key`'s entry, if any.
    private func index(of key: ServiceKey) -> Int? {
        let slots = storage.slots
        let mask = storage.capacity - 1
        let hash = Self.hash(key)
        var index = hash & mask
        while let entry = slots[index].entry {
            if slots[index].hash == hash, entry._withUnsafeGuaranteedRef({ $0.key == key }) { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Stores `entry` under its key and returns the entry it replaced, if any.
    @discardableResult
    mutating func insert(_ entry: ServiceEntry) -> ServiceEntry? {
        if (count + 1) * 2 > storage.capacity { rehash(capacity: storage.capacity * 2) }
        // One probe finds the key's slot, or the empty slot where it goes: no slot is ever emptied in between.
        let slots = storage.slots
        let mask = storage.capacity - 1
        let hash = Self.hash(entry.key)
        var index = hash & mask
        while let slot = slots[index].entry {
            if slots[index].hash == hash, slot._withUnsafeGuaranteedRef({ $0.key == entry.key }) {
                slots[index].entry = .passRetained(entry)
                return slot.takeRetainedValue()
            }
            index = (index + 1) & mask
        }
        slots[index] = Slot(entry: .passRetained(entry), hash: hash)
        count += 1
        return nil
    }

    /// Removes the entries whose keys match, and the forwards to them, and returns what it removed.
    mutating func removeAll(where shouldRemove: (ServiceKey) -> Bool) -> [ServiceEntry] {
        func matches(_ entry: ServiceEntry) -> Bool {
            shouldRemove(entry.key) || entry.forwardTarget.map(shouldRemove) == true
        }
        let all = values
        let removed = all.filter(matches)
        guard !removed.isEmpty else { return [] }
        self = ServiceTable()
        for entry in all where !matches(entry) { insert(entry) }
        return removed
    }

    var values: [ServiceEntry] {
        (0..<storage.capacity).compactMap { storage.slots[$0].entry?.takeUnretainedValue() }
    }

    /// Moves every slot to a table of `capacity` slots. The references move as they are: no retain, no release,
    /// no array of the entries in between, and no entry read (the slots know their hashes).
    private mutating func rehash(capacity: Int) {
        let old = storage
        storage = Storage(capacity: capacity)
        let mask = capacity - 1
        for index in 0..<old.capacity {
            let slot = old.slots[index]
            guard slot.entry != nil else { continue }
            var target = slot.hash & mask
            while storage.slots[target].entry != nil { target = (target + 1) & mask }
            storage.slots[target] = slot
            old.slots[index].entry = nil  // Now owned by the new table.
        }
    }

    @inline(__always)
    private static func hash(_ key: ServiceKey) -> Int {
        let service = UInt(bitPattern: ObjectIdentifier(key.serviceType))
        let arguments = UInt(bitPattern: ObjectIdentifier(key.argumentsType))
        var mixed = (service &* 0x9E37_79B9_7F4A_7C15) ^ (arguments &* 0xC2B2_AE3D_27D4_EB4F)
        if let name = key.name { mixed ^= UInt(bitPattern: name.hashValue) &* 0x1656_67B1_9E37_79F9 }
        return Int(bitPattern: mixed ^ (mixed >> 29))
    }
}
