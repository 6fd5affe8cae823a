/// A ``StoredValue`` that threads read without a lock and without retaining it: a permanent instance that every
/// request of a server reads, from every core.
///
/// Under a lock, each read wrote the lock's word, which the other cores then had to fetch back: in a server whose
/// requests each read a few app-wide instances, that cache line moved between the cores several times a request.
/// A read here writes only its own thread's hazard word (measured: `concurrent_request_scope`, two threads making a
/// request each on one app container, took 15% less time without the lock of its four permanent reads).
///
/// Safe because: the owner publishes a value only while it keeps the box alive itself, and before it lets the box
/// go it withdraws it — a store in the total order of sequentially consistent operations — and then waits until no
/// reader protects the box (``Reclamation/waitUntilUnprotected(_:)``). A reader protects the box's address in its
/// hazard word (a store in the same total order) and only then checks that the box is still published: either its
/// protection comes first in that order, and the withdrawing owner sees it and waits, or the withdrawal comes first,
/// and the reader's check fails and it copies nothing. Between the two, a reader only copies the value (retains), which
/// never blocks and runs no code of the user's. The box itself is immutable (``StoredValue``).
package struct PublishedValue: @unchecked Sendable {
    @usableFromInline let word: AtomicWord

    /// An empty publication. Pair with `deallocate()`.
    package init() {
        word = AtomicWord(0)
    }

    /// Frees the word. Nothing may be published: withdraw it first, or be sure that no reader can reach this
    /// publication any more (its owner is being deinitialized).
    package func deallocate() {
        word.deallocate()
    }

    /// Whether a box is published.
    package var isPublished: Bool { word.load() != 0 }

    /// Makes `box` readable without a lock, until `withdraw(from:)`. The caller keeps `box` alive until then, and
    /// publishes from under the lock that orders its changes.
    package func publish(_ box: StoredValue) {
        word.storeInTotalOrder(Int(bitPattern: Unmanaged.passUnretained(box).toOpaque()))
    }

    /// Ends the publication, and returns once no reader still copies from the box: after it, the caller may release
    /// the box. Does nothing when nothing is published.
    package func withdraw(from readers: Reclamation = .shared) {
        let address = word.load()
        guard address != 0 else { return }
        word.storeInTotalOrder(0)
        readers.waitUntilUnprotected(address)
    }

    /// Says that nothing is published.
    package struct NotPublished: Error {
        package init() {}
    }

    /// A copy of the published value, as `Value`, the type it was stored as; throws when nothing is published.
    /// `hazard` is the calling thread's reader's.
    ///
    /// It throws rather than returning `Value?`, as ``StoredValue``'s readers do: an optional of a generic type costs
    /// unspecialized callers a metadata look-up.
    @inlinable
    @inline(__always)
    package func read<Value>(as _: Value.Type, protectedBy hazard: Reclamation.Hazard) throws(NotPublished) -> Value {
        let address = word.load()
        guard address != 0 else { throw NotPublished() }
        hazard.protect(address)
        defer { hazard.unprotect() }
        guard word.loadInTotalOrder() == address else { throw NotPublished() }
        let box = Unmanaged<StoredValue>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
        return box._withUnsafeGuaranteedRef { $0.load(as: Value.self) }
    }
}
