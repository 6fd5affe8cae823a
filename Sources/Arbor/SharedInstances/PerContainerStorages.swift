internal import ArborPrimitives

/// The storages of the per-container instances one container keeps (``ObjectScope/perContainer``), by registration
/// identity.
///
/// A container keeps a few: a request's unit of work, its logger, its user. A short array, searched from the start,
/// finds one of a few faster than a dictionary hashes the key, and making it costs one small allocation where a
/// dictionary with room for a few took more than a thousand instructions (measured: a request child with three
/// per-container services, 1,150 instructions of its 41,000). Past `smallLimit` storages, a dictionary takes over.
struct PerContainerStorages {
    private static let smallLimit = 16
    private typealias Element = (identity: Int, storage: InstanceStorage)
    /// The first storage added, kept without an array: a request child usually keeps one, its unit of work (measured:
    /// the array was an allocation and a free, 450 instructions of such a request).
    private var first: Element?
    /// The ones added after `first`, while there are at most `smallLimit` in all.
    private var small: [Element] = []
    /// `nil` until there are more than `smallLimit`; then it holds them all, and `first` and `small` none.
    private var large: [Int: InstanceStorage]?

    var isEmpty: Bool { first == nil && large == nil }

    var count: Int { large?.count ?? (first == nil ? 0 : 1 + small.count) }

    /// Every storage, in no particular order.
    var values: [InstanceStorage] {
        if let large { return Array(large.values) }
        return (first.map { [$0.storage] } ?? []) + small.map(\.storage)
    }

    /// Drops every instance the storages hold, and adds them, with their release hooks, to `released`. Call with
    /// the container's lock held.
    func releaseLocked(into released: inout [ReleasedInstance]) {
        if let large {
            for storage in large.values {
                if let instance = storage.releaseLocked() { released.append(instance) }
            }
            return
        }
        if let instance = first?.storage.releaseLocked() { released.append(instance) }
        for element in small {
            if let instance = element.storage.releaseLocked() { released.append(instance) }
        }
    }

    /// `self[identity]`, unretained: the caller holds the container's lock, and the container keeps the storage.
    @inline(__always)
    func reference(for identity: Int) -> Unretained<InstanceStorage>? {
        guard let large else {
            if let first, first.identity == identity { return Unretained(first.storage, retainedInChecks: false) }
            for element in small where element.identity == identity {
                return Unretained(element.storage, retainedInChecks: false)
            }
            return nil
        }
        return large[identity].map { Unretained($0, retainedInChecks: false) }
    }

    subscript(identity: Int) -> InstanceStorage? {
        reference(for: identity)?.object
    }

    /// Adds the storage of a registration that has none here yet.
    mutating func add(_ storage: InstanceStorage, for identity: Int) {
        if large == nil {
            guard let first else {
                first = (identity, storage)
                return
            }
            if 1 + small.count < Self.smallLimit {
                if small.isEmpty { small.reserveCapacity(4) }
                small.append((identity, storage))
                return
            }
            large = Dictionary(uniqueKeysWithValues: ([first] + small).map { ($0.identity, $0.storage) })
            self.first = nil
            small = []
        }
        large![identity] = storage
    }
}
