internal import ArborPrimitives

/// Identifies one instance within a graph: a registration, built from one context container.
struct GraphSlot: Hashable {
    /// The registration's ``ServiceEntry/identity``.
    let registration: Int
    /// The context container: compared, never used.
    let context: Unretained<Container>

    /// One word into the hasher, not two: the registration's number and the container's address, mixed.
    func hash(into hasher: inout Hasher) {
        hasher.combine(UInt(bitPattern: registration) &* 0x9E37_79B9_7F4A_7C15 ^ UInt(bitPattern: context.toOpaque()))
    }
}

/// The graph-scoped instances of one resolution.
///
/// A slot's instance is always of its registration's own service type — the type every resolve of that
/// registration asks for — so the instances live in a ``ValueStack``, kept and read back with that type.
///
/// Most graphs hold a handful of instances, and a linear search of a small buffer beats hashing (measured: hashing
/// the slot cost more than the rest of a graph-scoped resolve). Past `indexThreshold` instances a dictionary
/// index keeps large graphs linear. The buffers belong to one resolution, used from one thread at a time. Free
/// them with `deallocate()`.
struct GraphInstances {
    private var slots = UnsafeStack<GraphSlot>()
    /// The instances, at the positions of their slots.
    private(set) var instances = ValueStack()
    /// Where each slot's instance is, once the graph has more than `indexThreshold`: `isIndexed`. Kept, emptied, for
    /// the next graph the resolution builds, so that a large graph does not grow it again every time (measured: the
    /// dictionary's growth was a seventh of `cold_start_200`).
    private var index: [GraphSlot: Int]?
    private var isIndexed = false
    private static let indexThreshold = 32

    var isEmpty: Bool { slots.isEmpty }

    /// Where the instance for `slot` is, if the graph has one.
    @inline(__always)
    func position(of slot: GraphSlot) -> Int? {
        if isIndexed, let index { return index[slot] }
        return slots.elements.firstIndex(of: slot)
    }

    /// The instance at `position`. `Service` is the type it was added with: its registration's service type.
    @inline(__always)
    func instance<Service>(at position: Int, as _: Service.Type) -> Service {
        instances.value(at: position, as: Service.self)
    }

    /// Adds (a copy of) the instance for a slot the graph does not have yet, and returns its position.
    @inline(__always)
    @discardableResult
    mutating func add<Service>(_ instance: Service, for slot: GraphSlot) -> Int {
        instances.push(instance)
        slots.push(slot)
        if isIndexed {
            index![slot] = slots.count - 1
        } else if slots.count > Self.indexThreshold {
            isIndexed = true
            if index == nil { index = Dictionary(minimumCapacity: Self.indexThreshold * 4) }
            for (position, slot) in slots.elements.enumerated() { index![slot] = position }
        }
        return slots.count - 1
    }

    /// Releases every instance, keeping the buffers for reuse.
    mutating func removeAll() {
        guard !slots.isEmpty else { return }
        instances.removeAll()
        slots.removeAll()
        if isIndexed {
            index!.removeAll(keepingCapacity: true)
            isIndexed = false
        }
    }

    func deallocate() {
        instances.deallocate()
        slots.deallocate()
    }
}
