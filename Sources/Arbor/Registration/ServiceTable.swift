public import ArborPrimitives

/// The registrations of one container, by key: an ``OpenAddressingTable`` of entries, which the container
/// mutates only under its lock and never copies.
///
/// A `Dictionary` hashes every key with SipHash, seeded per table; for a key made of two type pointers and a
/// name that is usually `nil`, that hashing cost more than the rest of a resolve's look-up (measured: about 300
/// instructions of a 600-instruction look-up). Type metadata pointers are unique and well spread, so a
/// multiplicative mix of them is a good hash (``ServiceEntry/tableHash(of:)``); a name, when there is one, adds its
/// standard hash.
struct ServiceTable {
    private var table = OpenAddressingTable<ServiceEntry>()

    var count: Int { table.count }

    subscript(key: ServiceKey) -> ServiceEntry? {
        table[key]
    }

    /// The entry under `key`, unretained: the table keeps it while its lock is held.
    func unretainedEntry(for key: ServiceKey) -> Unretained<ServiceEntry>? {
        table.unretainedElement(for: key)
    }

    /// Stores `entry` under its key and returns the entry it replaced, if any.
    @discardableResult
    mutating func insert(_ entry: ServiceEntry) -> ServiceEntry? {
        table.insert(entry)
    }

    /// Removes the entries whose keys match, and the forwards to them, and returns what it removed.
    mutating func removeAll(where shouldRemove: (ServiceKey) -> Bool) -> [ServiceEntry] {
        table.removeAll { entry in shouldRemove(entry.key) || entry.forwardTarget.map(shouldRemove) == true }
    }

    var values: [ServiceEntry] { table.elements }

    /// Calls `body` with each entry, without an array of them.
    func forEach(_ body: (ServiceEntry) -> Void) {
        table.forEach(body)
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
