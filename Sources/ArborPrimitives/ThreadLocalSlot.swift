// Public: the accessors below are inlined into Arbor, so the C thread-locals they read must be visible there.
public import CArborSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pointer per thread, in a C thread-local variable: read and written without a library call (`pthread_getspecific`
/// is one on every use), each thread seeing only its own.
///
/// Arbor has two: `context`, the thread's resolving state (its look-up cache and more), and `pooled`, the
/// resolution the thread reuses for its top-level resolves. What a slot points at is the owner's business: Arbor keeps
/// a retained object in each, and ``releaseAtThreadExit(_:)`` has the context released when its thread exits.
///
/// Safe because: the variables are `_Thread_local`, so no other thread reads or writes them, and a slot only stores a
/// pointer; it retains, releases and dereferences nothing itself.
@usableFromInline
package enum ThreadLocalSlot: Sendable {
    case context
    case pooled

    /// The calling thread's pointer in this slot, or `nil`.
    @inlinable
    @inline(__always)
    package var value: UnsafeMutableRawPointer? {
        switch self {
        case .context: carbor_get_thread_context()
        case .pooled: carbor_get_pooled_resolution()
        }
    }

    /// Sets the calling thread's pointer in this slot.
    @inlinable
    @inline(__always)
    package func set(_ pointer: UnsafeMutableRawPointer?) {
        switch self {
        case .context: carbor_set_thread_context(pointer)
        case .pooled: carbor_set_pooled_resolution(pointer)
        }
    }

    /// Where the calling thread's `pooled` pointer is stored, for a caller that checks the reference in place
    /// (`isKnownUniquelyReferenced`).
    @inlinable
    @inline(__always)
    package static var pooledAddress: UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(mutating: carbor_pooled_resolution_address())
    }

    /// Releases the calling thread's `context` object when the thread exits (a pthread key destructor), after
    /// clearing the slot: a deinit that runs then and uses the slot finds it empty. `object` is the retained object
    /// the slot points at (`Unmanaged.passRetained(_:).toOpaque()`). Call once per thread, after setting the slot.
    package static func releaseAtThreadExit(_ object: UnsafeMutableRawPointer) {
        let result = pthread_setspecific(ThreadExit.key, object)
        precondition(result == 0, "pthread_setspecific failed: \(result)")
    }
}

/// The pthread key whose destructor releases a thread's `context`.
private enum ThreadExit {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, releaseContext)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()
}

#if canImport(Darwin)
private func releaseContext(_ raw: UnsafeMutableRawPointer) {
    carbor_set_thread_context(nil)
    Unmanaged<AnyObject>.fromOpaque(raw).release()
}
#else
private func releaseContext(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    carbor_set_thread_context(nil)
    Unmanaged<AnyObject>.fromOpaque(raw).release()
}
#endif
