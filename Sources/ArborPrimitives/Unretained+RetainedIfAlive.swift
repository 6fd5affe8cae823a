// Public: `retainedIfAlive()` is inlined into Arbor, so the runtime entry point it calls must be visible there.
public import CArborSupport

extension Unretained {
    /// The object, retained, or `nil` if its deinit has begun: what a `weak` reference gives, for an object that
    /// has no weak reference to it.
    ///
    /// A `weak` reference gives its object a side table, for good: 32 bytes more, and every later retain and
    /// release of the object takes the runtime's slower path. A list whose members remove themselves in their
    /// `deinit` (a container's children) can instead hold them unretained, and read them with this.
    ///
    /// Safe because — and only as long as — the object's memory has not been freed: the caller must know that the
    /// object is alive or in its deinit (for example, because its deinit takes a lock the caller holds, before it
    /// returns). The runtime's `swift_tryRetain` then retains it atomically unless it is deinitializing; a strong
    /// reference is never made to an object whose deinit has begun, which would outlive it. In an internal-checks
    /// build, an `Unretained` made with `retainedInChecks: true` keeps its object alive and always returns it.
    @inlinable
    @inline(__always)
    package func retainedIfAlive() -> Object? {
        #if ARBOR_INTERNAL_CHECKS
        if let strong { return strong }
        #endif
        guard carbor_try_retain(reference.toOpaque()) else { return nil }
        return reference.takeRetainedValue()
    }
}
