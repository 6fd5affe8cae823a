internal import CArborSupport

/// A machine word that threads read without a lock: loads acquire, stores release.
///
/// The word lives in memory of its own that never moves, so its address is stable for the C atomics.
/// The owner frees it with `deallocate()`.
struct AtomicWord: @unchecked Sendable {
    private let word: UnsafeMutablePointer<Int>

    init(_ value: Int) {
        word = .allocate(capacity: 1)
        word.initialize(to: value)
    }

    /// A word alone on its cache line, for one that a thread writes often while others read it: sharing the line
    /// with another thread's word would make the two threads' writes slow each other down.
    init(alone value: Int) {
        let line = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 128)
        word = line.bindMemory(to: Int.self, capacity: 1)
        word.initialize(to: value)
    }

    @inline(__always)
    func load() -> Int {
        carbor_load_acquire(word)
    }

    /// A load in the total order of sequentially consistent operations (a plain load on x86_64).
    @inline(__always)
    func loadInTotalOrder() -> Int {
        carbor_load_seq_cst(word)
    }

    /// A store in the total order of sequentially consistent operations: no later load of this thread moves
    /// before it.
    @inline(__always)
    func storeInTotalOrder(_ value: Int) {
        carbor_store_seq_cst(word, value)
    }

    /// A store that a compiler barrier keeps before later accesses: the light side of the process barrier
    /// (`CArborBarrier.h`), ordered before this thread's later loads once another thread runs that barrier.
    @inline(__always)
    func storeBeforeProcessBarrier(_ value: Int) {
        carbor_store_before_process_barrier(word, value)
    }

    @inline(__always)
    func store(_ value: Int) {
        carbor_store_release(word, value)
    }

    /// Adds `delta` and returns the value before.
    @inline(__always)
    func fetchAdd(_ delta: Int) -> Int {
        carbor_fetch_add(word, delta)
    }

    func deallocate() {
        word.deallocate()
    }
}

/// Numbers that are never handed out twice in a process: each change to a container's registrations gets one,
/// so a cached look-up can never be mistaken for one of another container, even one at a recycled address.
enum UniqueNumber {
    /// Starts at 2: 0 and 1 mean "none" and "any" where these numbers are published (``ResolvingThreads``).
    private static let counter = AtomicWord(2)

    static func next() -> Int {
        counter.fetchAdd(1)
    }
}
