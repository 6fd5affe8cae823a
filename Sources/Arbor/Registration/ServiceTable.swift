/// The registrations of one container, by key: an open-addressing hash table with linear probing.
///
/// A `Dictionary` hashes every key with SipHash, seeded per table; for a key made of two type pointers and a
/// name that is usually `nil`, that hashing cost more than the rest of a resolve's look-up (measured: about 300
/// instructions of a 600-instruction look-up). Type metadata pointers are unique and well spread, so a
/// multiplicative mix of them is a good hash; a name, when there is one, adds its standard hash.
struct ServiceTable {
    private var keys: [ServiceKey?]
    private var entries: [ServiceEntry?]
    private(set) var count = 0
    /// `capacity - 1`; the capacity is a power of two and at least twice `count`.
    private var mask: Int

    init() {
        keys = Array(repeating: nil, count: 8)
        entries = Array(repeating: nil, count: 8)
        mask = 7
    }

    subscript(key: ServiceKey) -> ServiceEntry? {
        guard count > 0 else { return nil }
        var index = Self.hash(key) & mask
        while let candidate = keys[index] {
            if candidate == key { return entries[index] }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Stores `entry` under its key and returns the entry it replaced, if any.
    @discardableResult
    mutating func insert(_ entry: ServiceEntry) -> ServiceEntry? {
        if (count + 1) * 2 > mask + 1 { grow() }
        var index = Self.hash(entry.key) & mask
        while let candidate = keys[index] {
            if candidate == entry.key {
                defer { entries[index] = entry }
                return entries[index]
            }
            index = (index + 1) & mask
        }
        keys[index] = entry.key
        entries[index] = entry
        count += 1
        return nil
    }

    /// Removes the entries whose keys match, and the forwards to them, and returns what it removed.
    mutating func removeAll(where shouldRemove: (ServiceKey) -> Bool) -> [ServiceEntry] {
        func matches(_ entry: ServiceEntry) -> Bool {
            shouldRemove(entry.key) || entry.forwardTarget.map(shouldRemove) == true
        }
        let removed = values.filter(matches)
        guard !removed.isEmpty else { return [] }
        let kept = values.filter { !matches($0) }
        self = ServiceTable()
        for entry in kept { insert(entry) }
        return removed
    }

    var values: [ServiceEntry] { entries.compactMap { $0 } }

    private mutating func grow() {
        let old = values
        let capacity = (mask + 1) * 2
        keys = Array(repeating: nil, count: capacity)
        entries = Array(repeating: nil, count: capacity)
        mask = capacity - 1
        count = 0
        for entry in old { insert(entry) }
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
