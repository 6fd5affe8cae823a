import ArborPrimitives
import Foundation

/// Counts the objects made and freed in one test, to show that nothing leaked and nothing was freed early.
final class Tally {
    var made = 0
    var freed = 0
    var alive: Int { made - freed }
}

/// An object that reports its birth and death to a tally.
final class Tracked {
    let id: Int
    let tally: Tally

    init(_ id: Int, _ tally: Tally) {
        self.id = id
        self.tally = tally
        tally.made += 1
    }

    deinit { tally.freed += 1 }
}

/// A counter that threads share; only the primitive under test makes sharing it safe.
final class UnsafeCounter: @unchecked Sendable {
    var value = 0
}

/// Values that threads hand back to the test, one slot per thread.
final class PerThread<Value>: @unchecked Sendable {
    private var slots: [Value]
    private let lock = NSLock()

    init(count: Int, initial: Value) { slots = Array(repeating: initial, count: count) }

    subscript(index: Int) -> Value {
        get { lock.withLock { slots[index] } }
        set { lock.withLock { slots[index] = newValue } }
    }

    var all: [Value] { lock.withLock { slots } }
}

/// Starts `count` threads, each with a reader of `reclamation`, that run `round` over and over until `stop` holds a
/// non-zero value; returns once every thread has its reader. Wait on the group it returns for them to finish.
func startReaders(
    _ count: Int, of reclamation: Reclamation, until stop: AtomicWord,
    round: @escaping @Sendable (Reclamation.Reader) -> Void
) -> DispatchGroup {
    let started = DispatchGroup()
    let finished = DispatchGroup()
    for _ in 0..<count {
        started.enter()
        finished.enter()
        Thread {
            let reader = Reclamation.Reader(of: reclamation)
            started.leave()
            while stop.load() == 0 { round(reader) }
            finished.leave()
        }.start()
    }
    started.wait()
    return finished
}
