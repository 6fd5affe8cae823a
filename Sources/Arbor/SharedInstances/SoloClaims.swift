/// The storages a resolution claimed *solo* — building their instances with no creation group, because nothing else
/// needed them (see ``CreationCoordinator``) — with when each one's factory returned.
///
/// A resolution keeps one for its whole life and empties it when it finishes, keeping the capacity: a resolve that
/// builds a request's few per-container instances allocates nothing here.
struct SoloClaims {
    /// A claimed storage, and when its factory returned (``CreationCoordinator/nextBuildSequence()``); 0 until it has.
    struct Claim {
        let storage: InstanceStorage
        var sequence: UInt64 = 0
    }

    /// One array of pairs rather than two arrays: a request's per-container build appends, records and empties one
    /// array.
    private var claims: [Claim] = []
    /// Set when a solo step found one of the storages promoted: the resolution finishes through the coordinator.
    var wasPromoted = false

    var isEmpty: Bool { claims.isEmpty && !wasPromoted }

    /// The claimed storages, in the order of `claims`.
    var storages: LazyMapSequence<[Claim], InstanceStorage> { claims.lazy.map(\.storage) }

    /// Whether `storage` is claimed, and every other claim still builds (its factory has not returned): then nothing
    /// else the resolution claimed waits to be published. Not promoted.
    @inline(__always)
    func othersStillBuild(besides storage: InstanceStorage) -> Bool {
        // The one claim, usually: a resolution's outermost build. (Measured: a call to the loop cost `weak_build` 15
        // of its 2,449 instructions.)
        if claims.count == 1 { return claims[0].storage === storage && !wasPromoted }
        return othersStillBuildAmongMany(besides: storage)
    }

    private func othersStillBuildAmongMany(besides storage: InstanceStorage) -> Bool {
        var found = false
        for claim in claims {
            if claim.storage === storage {
                found = true
            } else if claim.sequence != 0 {
                return false
            }
        }
        return found && !wasPromoted
    }

    func contains(_ storage: InstanceStorage) -> Bool {
        claims.contains { $0.storage === storage }
    }

    mutating func append(_ storage: InstanceStorage) {
        if claims.capacity == 0 {
            // Room for a request's few at once.
            claims.reserveCapacity(4)
        }
        claims.append(Claim(storage: storage))
    }

    mutating func recordBuilt(_ storage: InstanceStorage, sequence: UInt64) {
        guard let index = claims.lastIndex(where: { $0.storage === storage }) else { return }
        claims[index].sequence = sequence
    }

    /// Removes the claim of `storage`, published as it was recorded: usually the last one, the innermost build.
    @inline(__always)
    mutating func removePublished(_ storage: InstanceStorage) {
        if !claims.isEmpty, claims[claims.count - 1].storage === storage {
            claims.removeLast()
        } else {
            remove(storage)
        }
    }

    mutating func remove(_ storage: InstanceStorage) {
        guard let index = claims.lastIndex(where: { $0.storage === storage }) else { return }
        claims.remove(at: index)
    }

    mutating func removeFirst(_ count: Int) {
        claims.removeFirst(count)
    }

    /// Puts the storages in the order their factories returned: the order they are published in.
    mutating func sortByBuild() {
        guard claims.count > 1 else { return }
        // An insertion sort: a resolution claims a few.
        for next in 1..<claims.count {
            var index = next
            while index > 0, claims[index - 1].sequence > claims[index].sequence {
                claims.swapAt(index - 1, index)
                index -= 1
            }
        }
    }

    mutating func removeAll() {
        // `removeLast()` one by one keeps the capacity, as `removeAll(keepingCapacity: true)` does, without its
        // generic `replaceSubrange` (measured: 580 instructions of a request's one per-container build, for two
        // arrays of one element).
        while !claims.isEmpty { claims.removeLast() }
        wasPromoted = false
    }
}
