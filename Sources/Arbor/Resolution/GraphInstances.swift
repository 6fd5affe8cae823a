/// Identifies one instance within a graph: a registration, built from one context container.
struct GraphSlot: Hashable {
    let registration: ObjectIdentifier
    /// The context container's address.
    let context: UnsafeMutableRawPointer
}

/// The graph-scoped instances of one resolution.
///
/// A slot's instance is always of its registration's own service type — the type a resolve of that registration
/// asks for — so an instance is stored with that static type, in memory the graph manages, and read back with it:
/// no `Any` box to build, no dynamic type to look up, no cast (measured: with `Any`, the box and the cast were
/// a third of a graph-scoped resolve, and for a protocol service the cast also looked up the conformance).
///
/// Most graphs hold a handful of instances, and a linear search of a small buffer beats hashing (measured: hashing
/// the slot cost more than the rest of a graph-scoped resolve). Past `indexThreshold` instances a dictionary
/// index keeps large graphs linear. The buffers belong to one resolution, used from one thread at a time. Free
/// them with `deallocate()`.
struct GraphInstances {
    /// Where one instance lives in `values`, and its type, which destroys or moves it.
    private struct Record {
        let offset: Int
        let type: Any.Type
        /// The instance is a class instance: one strong reference, released without a generic call (measured: the
        /// generic destroy cost more than the rest of storing and finding a graph instance).
        let isObject: Bool
    }

    private var slots = UnsafeStack<GraphSlot>()
    private var records = UnsafeStack<Record>()
    /// The instances, each at its record's offset, aligned for its type.
    private var values: UnsafeMutableRawPointer
    private var capacity = 512
    private var used = 0
    private var index: [GraphSlot: Int]?
    private static let indexThreshold = 32
    private static let alignment = 64

    init() {
        values = .allocate(byteCount: capacity, alignment: Self.alignment)
    }

    /// Where the instance for `slot` is, if the graph has one.
    @inline(__always)
    func position(of slot: GraphSlot) -> Int? {
        if let index { return index[slot] }
        return slots.elements.firstIndex(of: slot)
    }

    /// The instance at `position`. `Service` is the type it was added with: its registration's service type.
    @inline(__always)
    func instance<Service>(at position: Int, as _: Service.Type) -> Service {
        (values + records[position].offset).assumingMemoryBound(to: Service.self).pointee
    }

    /// Adds (a copy of) the instance for a slot the graph does not have yet.
    @inline(__always)
    mutating func add<Service>(_ instance: Service, for slot: GraphSlot) {
        let offset = (used + MemoryLayout<Service>.alignment - 1) & ~(MemoryLayout<Service>.alignment - 1)
        let end = offset + MemoryLayout<Service>.size
        if end > capacity { grow(toHold: end) }
        (values + offset).assumingMemoryBound(to: Service.self).initialize(to: instance)
        used = end
        slots.push(slot)
        records.push(Record(offset: offset, type: Service.self, isObject: Service.self is AnyClass))
        if index != nil {
            index![slot] = slots.count - 1
        } else if slots.count > Self.indexThreshold {
            index = Dictionary(uniqueKeysWithValues: zip(slots.elements, slots.elements.indices))
        }
    }

    /// Releases every instance, keeping the buffers for reuse.
    mutating func removeAll() {
        guard !slots.isEmpty else { return }
        destroyAll()
        slots.removeAll()
        records.removeAll()
        used = 0
        index = nil
    }

    func deallocate() {
        destroyAll()
        slots.deallocate()
        records.deallocate()
        values.deallocate()
    }

    private func destroyAll() {
        for record in records.elements {
            if record.isObject {
                Unmanaged<AnyObject>.fromOpaque((values + record.offset).load(as: UnsafeRawPointer.self)).release()
            } else {
                destroy(record.type, at: values + record.offset)
            }
        }
    }

    /// Moves every instance to a buffer at least twice as large, which holds `byteCount` bytes.
    private mutating func grow(toHold byteCount: Int) {
        var larger = capacity * 2
        while larger < byteCount { larger *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: Self.alignment)
        for record in records.elements {
            move(record.type, from: values + record.offset, to: moved + record.offset)
        }
        values.deallocate()
        values = moved
        capacity = larger
    }
}

private func destroy<Value>(_: Value.Type, at address: UnsafeMutableRawPointer) {
    _ = address.assumingMemoryBound(to: Value.self).move()  // `deinitialize(count:)` loops in the runtime.
}

private func move<Value>(_: Value.Type, from source: UnsafeMutableRawPointer, to target: UnsafeMutableRawPointer) {
    target.initializeMemory(as: Value.self, to: source.assumingMemoryBound(to: Value.self).move())
}
