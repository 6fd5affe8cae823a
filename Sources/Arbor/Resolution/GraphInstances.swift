/// Identifies one instance within a graph: a registration, built from one context container.
struct GraphSlot: Hashable {
    let registration: ObjectIdentifier
    let context: ObjectIdentifier
}

/// The graph-scoped instances of one resolution.
///
/// Most graphs hold a handful of instances, and a linear search of a small array beats hashing (measured: hashing
/// the slot cost more than the rest of a graph-scoped resolve). Past `indexThreshold` instances a dictionary
/// index keeps large graphs linear.
struct GraphInstances {
    private var slots: [GraphSlot] = []
    private var instances: [Any] = []
    private var index: [GraphSlot: Int]?
    private static let indexThreshold = 32

    subscript(slot: GraphSlot) -> Any? {
        get {
            if let index { return index[slot].map { instances[$0] } }
            guard let position = slots.firstIndex(of: slot) else { return nil }
            return instances[position]
        }
        set {
            // Only ever called to add a slot that is not there yet.
            guard let newValue else { return }
            slots.append(slot)
            instances.append(newValue)
            if index != nil {
                index![slot] = slots.count - 1
            } else if slots.count > Self.indexThreshold {
                index = Dictionary(uniqueKeysWithValues: zip(slots, slots.indices))
            }
        }
    }

    /// Forgets every instance, keeping the small buffers for reuse.
    mutating func removeAll() {
        guard !slots.isEmpty else { return }
        if slots.count > Self.indexThreshold {
            slots = []
            instances = []
        } else {
            slots.removeAll(keepingCapacity: true)
            instances.removeAll(keepingCapacity: true)
        }
        index = nil
    }
}
