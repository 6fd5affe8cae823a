// Public: the accessor below is inlined into Arbor, so the C function it calls must be visible there.
public import CArborSupport

/// Identifies the calling thread, so that a resolution can tell whether it is being used on the thread that owns it.
///
/// A number the thread takes on first use (a ``UniqueNumber``, doubled: even), kept in a thread-local variable: read
/// without a library call (measured: `pthread_self` and `pthread_equal` were two calls on every nested resolve), and
/// never the number of another thread, also one that has exited. A resolution bound to a thread keeps that thread's look-up
/// cache, which goes when the thread exits; the address of a thread-local variable, used before, came back for a
/// thread made after another exited, and a pooled `async` resolution took the new thread for the old one and read
/// the freed cache.
@usableFromInline
package struct ThreadID: Hashable, Sendable {
    @usableFromInline let marker: UInt

    @inlinable
    init(marker: UInt) { self.marker = marker }

    /// The calling thread.
    @inlinable
    @inline(__always)
    package static var current: ThreadID {
        let marker = carbor_get_thread_number()
        if _fastPath(marker != 0) { return ThreadID(marker: marker) }
        return numberTheCurrentThread()
    }

    /// Gives the calling thread its number, on its first use of ``current``.
    @usableFromInline
    @inline(never)
    static func numberTheCurrentThread() -> ThreadID {
        let marker = UInt(bitPattern: UniqueNumber.next()) &<< 1
        carbor_set_thread_number(marker)
        return ThreadID(marker: marker)
    }

    /// An identity no thread has, made from `number` (a number no other caller used): what stands for a thread where
    /// work that is not bound to one — an `async` resolution, which moves between threads — takes part in bookkeeping
    /// kept by thread. Thread markers are even; these are odd, with the second bit set.
    @inlinable
    package static func unbound(_ number: Int) -> ThreadID {
        ThreadID(marker: UInt(bitPattern: number) &<< 2 | 3)
    }

    /// An identity no thread has, for the task at `address`: what the `async` resolutions running in that task stand
    /// as, so that one begun in another's factory — suspended under it, as a nested resolve is on a thread — is
    /// known to be. Odd, with the second bit clear (a task's address is even), so never an ``unbound(_:)`` one.
    @inlinable
    package static func task(_ address: UnsafeRawPointer) -> ThreadID {
        ThreadID(marker: UInt(bitPattern: Int(bitPattern: address)) &<< 1 | 1)
    }

    /// The identity as a word, never 0: for an atomic word that records which thread is doing something, where
    /// the thread that reads its own number there knows it put it there.
    @inlinable
    package var word: Int { Int(bitPattern: marker) }

    /// Whether this is an identity from ``unbound(_:)``, not a thread's.
    @inlinable
    package var isUnbound: Bool { marker & 1 == 1 }
}
