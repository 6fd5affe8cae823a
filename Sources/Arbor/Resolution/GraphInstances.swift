/// Identifies one instance within a graph: a registration, built from one context container.
struct GraphSlot: Hashable {
    let registration: ObjectIdentifier
    /// The context container's address.
    let context: UnsafeMutableRawPointer
}

/// The graph-scoped instances of one resolution.
///
/// Most graphs hold a handful of instances, and a linear search of a small buffer beats hashing (measured: hashing
/// the slot cost more than the rest of a graph-scoped resolve). Past `indexThreshold` instances a dictionary
/// index keeps large graphs linear. A miss touches only the slots, never the instances (measured: copying an
/// `Any?` out on every look-up cost more than the search). The buffers are ``UnsafeStack``s: the resolution
/// that owns them is used from one thread at a time. Free them with `deallocate()`.
struct GraphInstances {
    private var slots = UnsafeStack<GraphSlot>()
    private var instances = UnsafeStack<Any>()
    private var index: [GraphSlot: Int]?
    private static let indexThreshold = 32

    /// Where the instance for `slot` is, if the graph has one.
    @inline(__always)
    func position(of slot: GraphSlot) -> Int? {
        if let index { return index[slot] }
        return slots.elements.firstIndex(of: slot)
    }

    func instance(at position: Int) -> Any {
        instances[position]
    }

    /// Adds the instance for a slot the graph does not have yet.
    @inline(__always)
    mutating func add(_ instance: consuming Any, for slot: GraphSlot) {
        slots.push(slot)
        instances.push(instance)
        if index != nil {
            index![slot] = slots.count - 1
        } else if slots.count > Self.indexThreshold {
            index = Dictionary(uniqueKeysWithValues: zip(slots.elements, slots.elements.indices))
        }
    }

    /// Forgets every instance, keeping the buffers for reuse.
    mutating func removeAll() {
        guard !slots.isEmpty else { return }
        slots.removeAll()
        instances.removeAll()
        index = nil
    }

    func deallocate() {
        slots.deallocate()
        instances.deallocate()
    }
}
