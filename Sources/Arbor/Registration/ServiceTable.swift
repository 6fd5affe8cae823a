public import ArborPrimitives

/// The registrations of one container, by key: up to two entries in fields of their own, then an
/// ``OpenAddressingTable`` of entries, which the container mutates only under its lock and never copies.
///
/// A `Dictionary` hashes every key with SipHash, seeded per table; for a key made of two type pointers and a
/// name that is usually `nil`, that hashing cost more than the rest of a resolve's look-up (measured: about 300
/// instructions of a 600-instruction look-up). Type metadata pointers are unique and well spread, so a
/// multiplicative mix of them is a good hash (``ServiceEntry/tableHash(of:)``); a name, when there is one, adds its
/// standard hash.
struct ServiceTable {
    /// The entries of the first two keys, while the table is empty and the container holds at most two; `second` is
    /// set only with `first`. A request's child registers a value or two — its user, an identifier — and they cost
    /// the table no storage of its own. (Measured: the table's first storage was an
    /// allocation, a free and about 450 instructions of a request's child: `request_scope` 16,062 → 15,592,
    /// `make_child_10_siblings` 7,064 → 6,657. A root pays about 34 instructions a registration for the check,
    /// `register_1000` +1.2%.)
    private var first: ServiceEntry?
    private var second: ServiceEntry?
    /// Every entry once there are more than two keys; empty until then.
    private var table = OpenAddressingTable<ServiceEntry>()

    var count: Int {
        guard first != nil else { return table.count }
        return second == nil ? 1 : 2
    }

    subscript(key: ServiceKey) -> ServiceEntry? {
        unretainedEntry(for: key)?.object
    }

    /// The entry under `key`, unretained: the table keeps it while its lock is held.
    // Inlined, as the table's look-up was before the two entries of their own; theirs is not. (Measured: with both
    // out of line, a registration in a root took 49 instructions more, `register_1000` +1.7%.)
    @inline(__always)
    func unretainedEntry(for key: ServiceKey) -> Unretained<ServiceEntry>? {
        first == nil ? table.unretainedElement(for: key) : smallEntry(for: key)
    }

    @inline(never)
    private func smallEntry(for key: ServiceKey) -> Unretained<ServiceEntry>? {
        guard let first else { return nil }
        if first.key == key { return Unretained(first) }
        if let second, second.key == key { return Unretained(second) }
        return nil
    }

    /// Stores `entry` under its key and returns the entry it replaced, if any.
    @inline(__always)
    @discardableResult
    mutating func insert(_ entry: ServiceEntry) -> ServiceEntry? {
        table.count == 0 ? insertWhileSmall(entry) : table.insert(entry)
    }

    /// `insert`, while the table is empty: into `first` or `second`, or, for a third key, into the table with them.
    @inline(never)
    private mutating func insertWhileSmall(_ entry: ServiceEntry) -> ServiceEntry? {
        internalInvariant(table.count == 0 && (first != nil || second == nil), "at most two entries, the table empty")
        if case let (true, replaced) = Self.place(entry, in: &first) { return replaced }
        if case let (true, replaced) = Self.place(entry, in: &second) { return replaced }
        // A third key: all three go to the table.
        table.insert(first!)
        table.insert(second!)
        first = nil
        second = nil
        return table.insert(entry)
    }

    /// Puts `entry` in `slot` if the slot is empty or holds its key: `placed`, with the entry it replaced.
    // Inlined: out of line it cost an insert about 35 instructions (`request_scope` 15,592 → 15,668).
    @inline(__always)
    private static func place(
        _ entry: ServiceEntry, in slot: inout ServiceEntry?
    ) -> (placed: Bool, replaced: ServiceEntry?) {
        guard let current = slot else {
            slot = entry
            return (true, nil)
        }
        guard current.key == entry.key else { return (false, nil) }
        slot = entry
        return (true, current)
    }

    /// Removes the entries whose keys match, and the forwards to them, and returns what it removed.
    mutating func removeAll(where shouldRemove: (ServiceKey) -> Bool) -> [ServiceEntry] {
        func matches(_ entry: ServiceEntry) -> Bool {
            shouldRemove(entry.key) || entry.forwardTarget.map(shouldRemove) == true
        }
        guard first != nil else { return table.removeAll(where: matches(_:)) }
        var kept: [ServiceEntry] = []
        var removed: [ServiceEntry] = []
        for case let entry? in [first, second] {
            if matches(entry) { removed.append(entry) } else { kept.append(entry) }
        }
        first = kept.first
        second = kept.count > 1 ? kept[1] : nil
        return removed
    }

    var values: [ServiceEntry] {
        guard let first else { return table.elements }
        return second.map { [first, $0] } ?? [first]
    }

    /// Calls `body` with each entry, without an array of them.
    func forEach(_ body: (ServiceEntry) -> Void) {
        guard let first else { return table.forEach(body) }
        body(first)
        if let second { body(second) }
    }
}

extension ServiceEntry: HashTableElement {
    @usableFromInline
    @inline(__always)
    static func tableHash(of key: ServiceKey) -> Int {
        let service = UInt(bitPattern: ObjectIdentifier(key.serviceType))
        let arguments = UInt(bitPattern: ObjectIdentifier(key.argumentsType))
        var mixed = (service &* 0x9E37_79B9_7F4A_7C15) ^ (arguments &* 0xC2B2_AE3D_27D4_EB4F)
        if let name = key.name { mixed ^= UInt(bitPattern: name.hashValue) &* 0x1656_67B1_9E37_79F9 }
        return Int(bitPattern: mixed ^ (mixed >> 29))
    }
}
