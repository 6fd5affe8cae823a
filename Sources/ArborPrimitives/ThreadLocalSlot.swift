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
/// a retained object in each, and ``releaseContextAtThreadExit()`` has the context released when its thread exits.
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

    // MARK: Objects

    /// The object in the calling thread's slot, unretained — the slot keeps it — in every build (a retained copy would
    /// make the slot's reference look shared to ``pooledHoldsTheOnlyReference(to:)``); `nil` if the slot is empty.
    /// `Object` must be the class of the object stored.
    @inlinable
    @inline(__always)
    package func object<Object: AnyObject>(as _: Object.Type) -> Unretained<Object>? {
        guard let value else { return nil }
        return Unretained(fromOpaque: value, retainedInChecks: false)
    }

    /// Stores `object`, retained, in the calling thread's slot, which must be empty: the slot owns it until
    /// ``removeObject(as:)``.
    @inlinable
    package func store<Object: AnyObject>(_ object: Object) {
        precondition(value == nil, "ThreadLocalSlot.\(self) already holds an object")
        set(Unmanaged.passRetained(object).toOpaque())
    }

    /// Takes the object out of the calling thread's slot and hands the caller the slot's reference; the slot is empty
    /// afterwards. `nil` if it was empty.
    @inlinable
    package func removeObject<Object: AnyObject>(as _: Object.Type) -> Object? {
        guard let value else { return nil }
        set(nil)
        return Unmanaged<Object>.fromOpaque(value).takeRetainedValue()
    }

    /// Whether the calling thread's slot holds `object`. Compares addresses only.
    @inlinable
    @inline(__always)
    package func holds<Object: AnyObject>(_ object: Unretained<Object>) -> Bool {
        value == object.toOpaque()
    }

    /// Whether the `pooled` slot's reference to its object, which must be `object`, is the only strong one.
    /// `isKnownUniquelyReferenced` on the reference where it lives, so the check itself retains nothing (measured:
    /// taking it out and putting it back was a retain and a release on every resolve).
    @inlinable
    @inline(__always)
    package static func pooledHoldsTheOnlyReference<Object: AnyObject>(to object: Unretained<Object>) -> Bool {
        internalInvariant(ThreadLocalSlot.pooled.holds(object), "the pooled slot does not hold the object")
        return isKnownUniquelyReferenced(&pooledAddress.assumingMemoryBound(to: Object.self).pointee)
    }

    /// Releases the object ``store(_:)`` put in the calling thread's `context` slot when the thread exits (a pthread
    /// key destructor), after clearing the slot: a deinit that runs then and uses the slot finds it empty. Call once
    /// per thread, after storing it.
    package static func releaseContextAtThreadExit() {
        guard let object = ThreadLocalSlot.context.value else { preconditionFailure("the context slot is empty") }
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
