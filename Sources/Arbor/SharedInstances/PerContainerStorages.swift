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
    private var small: [(identity: Int, storage: InstanceStorage)] = []
    /// `nil` until there are more than `smallLimit`; then it holds them all.
    private var large: [Int: InstanceStorage]?

    var isEmpty: Bool { small.isEmpty && large == nil }

    var count: Int { large?.count ?? small.count }

    /// Every storage, in no particular order.
    var values: [InstanceStorage] { large.map { Array($0.values) } ?? small.map(\.storage) }

    /// Drops every instance the storages hold, and adds them, with their release hooks, to `released`. Call with
    /// the container's lock held.
    func releaseLocked(into released: inout [ReleasedInstance]) {
        if let large {
            for storage in large.values {
                if let instance = storage.releaseLocked() { released.append(instance) }
            }
        } else {
            for element in small {
                if let instance = element.storage.releaseLocked() { released.append(instance) }
            }
        }
    }

    /// `self[identity]`, unretained: the caller holds the container's lock, and the container keeps the storage.
    @inline(__always)
    func reference(for identity: Int) -> Unretained<InstanceStorage>? {
        guard let large else {
            for element in small where element.identity == identity {
                return Unretained(element.storage, retainedInChecks: false)
            }
            return nil
        }
        return large[identity].map { Unretained($0, retainedInChecks: false) }
    }

    subscript(identity: Int) -> InstanceStorage? {
        guard let large else {
            for element in small where element.identity == identity { return element.storage }
            return nil
        }
        return large[identity]
    }

    /// Adds the storage of a registration that has none here yet.
    mutating func add(_ storage: InstanceStorage, for identity: Int) {
        if large == nil, small.count < Self.smallLimit {
            if small.isEmpty { small.reserveCapacity(4) }
            small.append((identity, storage))
            return
        }
        if large == nil {
            large = Dictionary(uniqueKeysWithValues: small.map { ($0.identity, $0.storage) })
            small = []
        }
        large![identity] = storage
    }
}
