// Public: the accessor below is inlined into Arbor, so the C function it calls must be visible there.
public import CArborSupport

/// Identifies the calling thread, so that a resolution can tell whether it is being used on the thread that owns it.
///
/// The address of a thread-local variable: unique among the threads that are running, and read without a library
/// call (measured: `pthread_self` and `pthread_equal` were two calls on every nested resolve). Compared, never
/// dereferenced.
@usableFromInline
package struct ThreadID: Hashable, Sendable {
    @usableFromInline let marker: UInt

    @inlinable
    init(marker: UInt) { self.marker = marker }

    /// The calling thread.
    @inlinable
    @inline(__always)
    package static var current: ThreadID { ThreadID(marker: UInt(bitPattern: carbor_thread_marker())) }

    /// An identity no thread has, made from `number` (a number no other caller used): what stands for a thread where
    /// work that is not bound to one — an `async` resolution, which moves between threads — takes part in bookkeeping
    /// kept by thread. Thread markers are addresses of a word, so they are even; these are odd.
    @inlinable
    package static func unbound(_ number: Int) -> ThreadID {
        ThreadID(marker: UInt(bitPattern: number) &<< 1 | 1)
    }

    /// Whether this is an identity from ``unbound(_:)``, not a thread's.
    @inlinable
    package var isUnbound: Bool { marker & 1 == 1 }
}
