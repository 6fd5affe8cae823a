/// The storages a resolution claimed *solo* — building their instances with no creation group, because nothing else
/// needed them (see ``CreationCoordinator``) — with when each one's factory returned.
///
/// A resolution keeps one for its whole life and empties it when it finishes, keeping the capacity: a resolve that
/// builds a request's few per-container instances allocates nothing here.
struct SoloClaims {
    private(set) var storages: [InstanceStorage] = []
    /// When each storage's factory returned (``CreationCoordinator/nextBuildSequence()``); 0 until it has.
    private var sequences: [UInt64] = []
    /// Set when a solo step found one of the storages promoted: the resolution finishes through the coordinator.
    var wasPromoted = false

    var isEmpty: Bool { storages.isEmpty && !wasPromoted }

    func contains(_ storage: InstanceStorage) -> Bool {
        storages.contains { $0 === storage }
    }

    mutating func append(_ storage: InstanceStorage) {
        if storages.capacity == 0 {
            // Room for a request's few at once.
            storages.reserveCapacity(4)
            sequences.reserveCapacity(4)
        }
        storages.append(storage)
        sequences.append(0)
    }

    mutating func recordBuilt(_ storage: InstanceStorage, sequence: UInt64) {
        guard let index = storages.lastIndex(where: { $0 === storage }) else { return }
        sequences[index] = sequence
    }

    mutating func remove(_ storage: InstanceStorage) {
        guard let index = storages.lastIndex(where: { $0 === storage }) else { return }
        storages.remove(at: index)
        sequences.remove(at: index)
    }

    mutating func removeFirst(_ count: Int) {
        storages.removeFirst(count)
        sequences.removeFirst(count)
    }

    /// Puts the storages in the order their factories returned: the order they are published in.
    mutating func sortByBuild() {
        guard storages.count > 1 else { return }
        // An insertion sort: a resolution claims a few.
        for next in 1..<storages.count {
            var index = next
            while index > 0, sequences[index - 1] > sequences[index] {
                storages.swapAt(index - 1, index)
                sequences.swapAt(index - 1, index)
                index -= 1
            }
        }
    }

    mutating func removeAll() {
        storages.removeAll(keepingCapacity: true)
        sequences.removeAll(keepingCapacity: true)
        wasPromoted = false
    }
}
