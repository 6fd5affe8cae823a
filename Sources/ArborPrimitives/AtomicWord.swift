// Public: the operations below are inlined into Arbor, so the C atomics they call must be visible there.
public import CArborSupport

/// A machine word that threads read without a lock: loads acquire, stores release.
///
/// Safe because: the word lives in memory of its own that never moves, allocated by `init`, so its address is
/// stable for the C atomics (`CArborAtomics.h`), and every access to it is one of those atomics. Copies of an
/// `AtomicWord` share the word; its owner frees it once with `deallocate()`, after which no copy may be used. With
/// `ARBOR_INTERNAL_CHECKS`, copies also share a flag that `deallocate()` sets, so a second `deallocate()` or an
/// access after it stops the program.
@usableFromInline
package struct AtomicWord: @unchecked Sendable {
    @usableFromInline let word: UnsafeMutablePointer<Int>
    #if ARBOR_INTERNAL_CHECKS
    @usableFromInline let liveness: AtomicWordLiveness
    #endif

    @inlinable
    package init(_ value: Int) {
        word = .allocate(capacity: 1)
        word.initialize(to: value)
        #if ARBOR_INTERNAL_CHECKS
        liveness = AtomicWordLiveness()
        #endif
    }

    /// The first of two words in one allocation (the allocator's smallest block holds two words as cheaply as one):
    /// this one, and ``second``, which lives exactly as long as this one does. `deallocate()` on this word frees
    /// both; the second word is never deallocated on its own.
    @inlinable
    package init(_ value: Int, second: Int) {
        word = .allocate(capacity: 2)
        word.initialize(to: value)
        (word + 1).initialize(to: second)
        #if ARBOR_INTERNAL_CHECKS
        liveness = AtomicWordLiveness()
        #endif
    }

    /// The first of three words in one allocation (the allocator's smallest block holds three words, on 64-bit
    /// Linux and Apple platforms, as cheaply as one): this one, ``second`` and ``third``, which live exactly as long
    /// as this one does. `deallocate()` on this word frees all three.
    @inlinable
    package init(_ value: Int, second: Int, third: Int) {
        word = .allocate(capacity: 3)
        word.initialize(to: value)
        (word + 1).initialize(to: second)
        (word + 2).initialize(to: third)
        #if ARBOR_INTERNAL_CHECKS
        liveness = AtomicWordLiveness()
        #endif
    }

    /// The first of four words in one allocation: this one, ``second``, ``third`` and ``fourth``, which live exactly
    /// as long as this one does. `deallocate()` on this word frees all four.
    @inlinable
    package init(_ value: Int, second: Int, third: Int, fourth: Int) {
        word = .allocate(capacity: 4)
        word.initialize(to: value)
        (word + 1).initialize(to: second)
        (word + 2).initialize(to: third)
        (word + 3).initialize(to: fourth)
        #if ARBOR_INTERNAL_CHECKS
        liveness = AtomicWordLiveness()
        #endif
    }

    #if ARBOR_INTERNAL_CHECKS
    @inlinable
    init(word: UnsafeMutablePointer<Int>, liveness: AtomicWordLiveness) {
        self.word = word
        self.liveness = liveness
    }
    #else
    @inlinable
    init(word: UnsafeMutablePointer<Int>) {
        self.word = word
    }
    #endif

    /// The fourth word of a quadruple made with ``init(_:second:third:fourth:)``: freed with this word. Read it only
    /// from a quadruple.
    @inlinable
    package var fourth: AtomicWord { neighbour(3) }

    /// The third word of a triple made with ``init(_:second:third:)``, or of a quadruple: freed with this word. Read
    /// it only from a triple or a quadruple.
    @inlinable
    package var third: AtomicWord { neighbour(2) }

    /// The second word of a pair made with ``init(_:second:)``, or of a triple or a quadruple: freed with this word.
    /// Read it only from one of those.
    @inlinable
    package var second: AtomicWord { neighbour(1) }

    /// The word `offset` words after this one, in the same allocation.
    @inlinable
    @inline(__always)
    func neighbour(_ offset: Int) -> AtomicWord {
        #if ARBOR_INTERNAL_CHECKS
        AtomicWord(word: word + offset, liveness: liveness)
        #else
        AtomicWord(word: word + offset)
        #endif
    }

    /// A word inside memory that another owner allocated and frees (the four words of ``Protected/words``): valid
    /// for as long as that owner lives, and never deallocated through this value. With `ARBOR_INTERNAL_CHECKS`,
    /// `deallocate()` on it stops the program.
    @inlinable
    package init(inside word: UnsafeMutablePointer<Int>) {
        #if ARBOR_INTERNAL_CHECKS
        self.init(word: word, liveness: AtomicWordLiveness.ownedElsewhere)
        #else
        self.init(word: word)
        #endif
    }

    /// A word alone on its cache line, for one that a thread writes often while others read it: sharing the line
    /// with another thread's word would make the two threads' writes slow each other down.
    @inlinable
    package init(alone value: Int) {
        let line = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 128)
        word = line.bindMemory(to: Int.self, capacity: 1)
        word.initialize(to: value)
        #if ARBOR_INTERNAL_CHECKS
        liveness = AtomicWordLiveness()
        #endif
    }

    @inlinable
    @inline(__always)
    package func load() -> Int {
        checkAllocated()
        return carbor_load_acquire(word)
    }

    /// A load in the total order of sequentially consistent operations (a plain load on x86_64).
    @inlinable
    @inline(__always)
    package func loadInTotalOrder() -> Int {
        checkAllocated()
        return carbor_load_seq_cst(word)
    }

    /// A store in the total order of sequentially consistent operations: no later load of this thread moves
    /// before it.
    @inlinable
    @inline(__always)
    package func storeInTotalOrder(_ value: Int) {
        checkAllocated()
        carbor_store_seq_cst(word, value)
    }

    /// A store that a compiler barrier keeps before later accesses: the light side of the process barrier
    /// (`CArborBarrier.h`), ordered before this thread's later loads once another thread runs that barrier.
    @inlinable
    @inline(__always)
    package func storeBeforeProcessBarrier(_ value: Int) {
        checkAllocated()
        carbor_store_before_process_barrier(word, value)
    }

    @inlinable
    @inline(__always)
    package func store(_ value: Int) {
        checkAllocated()
        carbor_store_release(word, value)
    }

    /// Adds `delta` and returns the value before.
    @inlinable
    @inline(__always)
    package func fetchAdd(_ delta: Int) -> Int {
        checkAllocated()
        return carbor_fetch_add(word, delta)
    }

    @inlinable
    package func deallocate() {
        #if ARBOR_INTERNAL_CHECKS
        precondition(
            liveness !== AtomicWordLiveness.ownedElsewhere, "AtomicWord(inside:) deallocated: its owner frees it")
        precondition(liveness.markDeallocated(), "AtomicWord deallocated twice")
        #endif
        word.deallocate()
    }

    @inlinable
    @inline(__always)
    func checkAllocated() {
        #if ARBOR_INTERNAL_CHECKS
        precondition(!liveness.isDeallocated, "AtomicWord used after deallocate()")
        #endif
    }
}

#if ARBOR_INTERNAL_CHECKS
/// Whether an ``AtomicWord`` was deallocated, shared by its copies: a flag in a word of its own, freed with the
/// last copy, changed with the same C atomics.
@usableFromInline
final class AtomicWordLiveness: @unchecked Sendable {
    let flag: UnsafeMutablePointer<Int>

    /// The liveness of every word made with ``AtomicWord/init(inside:)``: never marked, since such words are freed
    /// with their owner's memory, which AddressSanitizer watches.
    @usableFromInline
    static let ownedElsewhere = AtomicWordLiveness()

    @usableFromInline
    init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit {
        flag.deallocate()
    }

    @usableFromInline
    var isDeallocated: Bool { carbor_load_acquire(flag) != 0 }

    /// Sets the flag; `false` if it was set already.
    @usableFromInline
    func markDeallocated() -> Bool {
        carbor_fetch_add(flag, 1) == 0
    }
}
#endif
