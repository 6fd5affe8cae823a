internal import CArborSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps one idle ``Resolution`` per thread, so a top-level resolve reuses it instead of allocating one.
///
/// An idle resolution refers to its last containers only `unowned(unsafe)` and never uses them again, so it keeps
/// no container alive.
///
/// Measured: allocating and freeing the resolution was a third of the cost of resolving a transient service
/// without dependencies. A resolution goes back to its thread's slot only if nothing else references it: a
/// factory that kept its resolver keeps a finished resolution, which then stays finished for good.
///
/// The slot is a C thread-local variable, read without a library call; a `pthread_key_t` holds the same pointer
/// only so that its destructor releases the resolution when the thread exits.
enum ResolutionPool {
    /// The pooled resolution (retained), or `nil`. Keeps the key's value in step with the thread-local variable.
    private static func setSlot(_ raw: UnsafeMutableRawPointer?) {
        carbor_set_pooled_resolution(raw)
        pthread_setspecific(key, raw)
    }

    private static func getSlot() -> UnsafeMutableRawPointer? {
        carbor_get_pooled_resolution()
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, releaseSlot)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// The calling thread's idle resolution, now the caller's; a new one if there is none, or if it is in use (a
    /// factory called a container's `resolve`: a nested top-level resolve), sharing the thread's look-up cache.
    ///
    /// The slot keeps pointing at the resolution while it is in use; the caller holds the slot's reference
    /// meanwhile, and `recycle` hands it back.
    static func take(for container: Container) -> Resolution {
        guard let raw = getSlot() else { return Resolution(origin: container, cache: LookupCache()) }
        let pooled = Unmanaged<Resolution>.fromOpaque(raw)
        guard pooled.takeUnretainedValue().isIdle else {
            return Resolution(origin: container, cache: pooled.takeUnretainedValue().cache)
        }
        return pooled.takeRetainedValue()
    }

    /// The calling thread's pooled resolution if it is idle, unretained: the thread's slot keeps it, and it stays
    /// there. Call `returnToPool` after factories ran in it.
    @inline(__always)
    static func idle() -> Unmanaged<Resolution>? {
        guard let raw = getSlot() else { return nil }
        let pooled = Unmanaged<Resolution>.fromOpaque(raw)
        return pooled._withUnsafeGuaranteedRef { $0.isIdle } ? pooled : nil
    }

    /// Keeps the pooled resolution in its slot after a resolve, unless a factory kept a reference to it: then it
    /// leaves the pool for good, with its origin retained. Call after the borrow from `idle()` ended.
    @inline(__always)
    static func returnToPool(_ pooled: Unmanaged<Resolution>) {
        // Nothing to check if no factory ran (a held instance was found).
        guard pooled._withUnsafeGuaranteedRef({ $0.wasLentOut() }) else { return }
        // The slot's reference is checked where it lives, so the check itself retains nothing (measured: taking it
        // out and putting it back was a retain and a release on every resolve).
        let slot = UnsafeMutableRawPointer(mutating: carbor_pooled_resolution_address())
        guard slot.load(as: UnsafeMutableRawPointer?.self) == pooled.toOpaque() else { return }
        if isKnownUniquelyReferenced(&slot.assumingMemoryBound(to: Resolution.self).pointee) { return }
        // A factory kept it: it leaves the slot for good, with its origin retained.
        pooled._withUnsafeGuaranteedRef { $0.keepOrigin() }
        setSlot(nil)
        pooled.release()
    }

    /// Keeps a finished resolution for the thread's next resolve, unless something else still references it.
    static func recycle(_ resolution: inout Resolution) {
        let inSlot = getSlot() == Unmanaged.passUnretained(resolution).toOpaque()
        guard isKnownUniquelyReferenced(&resolution) else {
            // A factory kept it: it leaves the slot for good, with its origin retained.
            resolution.keepOrigin()
            if inSlot { setSlot(nil) }
            return
        }
        if inSlot {
            _ = Unmanaged.passRetained(resolution)  // The slot owns it again.
        } else if resolution.thread == .current, getSlot() == nil {
            setSlot(Unmanaged.passRetained(resolution).toOpaque())
        }
    }
}

#if canImport(Darwin)
private func releaseSlot(_ raw: UnsafeMutableRawPointer) {
    carbor_set_pooled_resolution(nil)  // A deinit that runs now and resolves gets a new resolution.
    Unmanaged<Resolution>.fromOpaque(raw).release()
}
#else
private func releaseSlot(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    carbor_set_pooled_resolution(nil)  // A deinit that runs now and resolves gets a new resolution.
    Unmanaged<Resolution>.fromOpaque(raw).release()
}
#endif
