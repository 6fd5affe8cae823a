internal import CArborSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// When something that left a shared structure may be freed, although readers found it without a lock and without
/// retaining it: once no reader that could still hold it is inside a *read section* of its *domain*.
///
/// Readers (one ``Reader`` per thread) announce the domain they read in before they read anything, and clear the
/// announcement when they are done; sections nest. A writer first makes the object unreachable for new readers
/// (in Arbor: it changes the versions that validate the readers' cached look-ups), then asks ``isQuiescent(_:)``:
/// if no reader is inside a section of that domain, nobody can still hold the object, and it may be freed; if one
/// is, the writer keeps the object and asks again later.
///
/// Safe because: a reader writes its announcement before it reads anything of the structure, and a writer reads
/// the announcements after it made the object unreachable, with a full memory barrier between the write and the read
/// on both sides, so either the writer sees the announcement and waits, or the reader sees the change and never
/// finds the object. Where the system can impose a barrier on every thread of the process (Linux `membarrier`,
/// `CArborBarrier.h`), the writer, which retires rarely, does that, and the reader, which reads millions of times a
/// second, needs only a compiler barrier; elsewhere both use sequentially consistent atomics. Should the system
/// refuse the barrier, the writer assumes a reader is inside, which only keeps the object longer.
///
/// Cost: announcing is a plain store with the process barrier, one `xchg` on x86_64 without it; clearing is a plain
/// store; nested sections pay nothing. Each reader's word sits on a cache line of its own.
@usableFromInline
package final class Reclamation: @unchecked Sendable {
    /// The readers of the process.
    package static let shared = Reclamation()

    /// Whether writers impose the process barrier when they read the announcements, so that readers need none when
    /// they announce. Decided once, before the first reader exists.
    @usableFromInline
    static let usesProcessBarrier = carbor_process_barrier_register() == 1

    /// The announcement of a reader inside sections of more than one domain: it holds up every domain.
    @usableFromInline
    package static let anyDomain = 1

    private let lock = Lock()
    private var readers: [ObjectIdentifier: (announcement: AtomicWord, hazard: Hazard)] = [:]

    package init() {}

    /// How many readers exist: in Arbor, one per thread that resolved and still runs.
    package var readerCount: Int { lock.withLock { readers.count } }

    /// Whether no reader is inside a read section of `domain`. Call after the objects to free were made unreachable.
    package func isQuiescent(_ domain: Int) -> Bool {
        precondition(domain != 0 && domain != Self.anyDomain, "Domains 0 and 1 are reserved.")
        // The heavy side of the barrier: every reader that announced itself before the change is seen.
        if Self.usesProcessBarrier, carbor_process_barrier() != 1 { return false }
        return lock.withLock {
            readers.values.allSatisfy { words in
                let announced = words.announcement.loadInTotalOrder()
                return announced != domain && announced != Self.anyDomain
            }
        }
    }

    /// Waits until no reader protects `address` (``Hazard/protect(_:)``): call after making the object at `address`
    /// unreachable for new readers with a store in the total order (``PublishedValue/withdraw(from:)``), before
    /// freeing it. A reader protects an object only for the few instructions it takes to copy from it, never across
    /// anything that blocks, so the wait is short; it yields the processor while it lasts.
    package func waitUntilUnprotected(_ address: Int) {
        precondition(address != 0, "0 is no object's address")
        lock.withLock {
            for words in readers.values {
                while words.hazard.word.loadInTotalOrder() == address { sched_yield() }
            }
        }
    }

    fileprivate func add(_ reader: Reader) {
        lock.withLock { readers[ObjectIdentifier(reader)] = (reader.announcement, reader.hazard) }
    }

    fileprivate func remove(_ reader: Reader) {
        lock.withLock { _ = readers.removeValue(forKey: ObjectIdentifier(reader)) }
    }

    /// One thread's announcements. Use it from its thread only.
    @usableFromInline
    package final class Reader {
        /// The domain the thread reads in, ``Reclamation/anyDomain``, or 0 outside any section.
        @usableFromInline let announcement = AtomicWord(alone: 0)
        /// What the thread copies from at the moment without a lock.
        package let hazard = Hazard()
        /// How many sections the thread is inside. Only the reader's thread touches it: the runtime's exclusivity
        /// checks are off.
        @usableFromInline @exclusivity(unchecked) var nesting = 0
        /// ``Reclamation/usesProcessBarrier``, read once.
        @usableFromInline let usesProcessBarrier = Reclamation.usesProcessBarrier
        private unowned let reclamation: Reclamation

        /// A reader of `reclamation`'s domains, for the calling thread.
        package init(of reclamation: Reclamation = .shared) {
            self.reclamation = reclamation
            reclamation.add(self)
        }

        deinit {
            reclamation.remove(self)
            announcement.deallocate()
            hazard.word.deallocate()
        }

        /// Enters a read section of `domain` (never 0 or 1), before reading anything in it. Pair with `exit()`.
        @inlinable
        @inline(__always)
        package func enter(_ domain: Int) {
            if nesting == 0 {
                announce(domain)
            } else if announcement.load() != domain {
                announce(Reclamation.anyDomain)
            }
            nesting += 1
        }

        /// Leaves the innermost read section.
        @inlinable
        @inline(__always)
        package func exit() {
            internalInvariant(nesting > 0, "exit() without enter()")
            nesting -= 1
            if nesting == 0 { announcement.store(0) }
        }

        /// Writes the announcement, ordered before every later read of this thread.
        @inlinable
        @inline(__always)
        func announce(_ domain: Int) {
            if usesProcessBarrier {
                announcement.storeBeforeProcessBarrier(domain)
            } else {
                announcement.storeInTotalOrder(domain)
            }
        }
    }

    /// One reader's hazard word: the address of the object its thread copies from at the moment, found without a
    /// lock, or 0. A copy of a reader's ``Reader/hazard``, which the reader owns, passed without a retain.
    package struct Hazard: @unchecked Sendable {
        @usableFromInline let word: AtomicWord

        init() {
            word = AtomicWord(alone: 0)
        }

        /// Tells writers that the thread is about to copy from the object at `address`: a writer that withdraws it
        /// waits (``Reclamation/waitUntilUnprotected(_:)``) until `unprotect()`. Check that the object is still
        /// published *after* this call, and copy from it only if it is. One object at a time, from the reader's thread.
        @inlinable
        @inline(__always)
        package func protect(_ address: Int) {
            word.storeInTotalOrder(address)
        }

        /// Ends `protect(_:)`: every read of the object happens before it.
        @inlinable
        @inline(__always)
        package func unprotect() {
            word.store(0)
        }
    }
}
