/// A strong reference whose owner releases it by hand, lent out without a retain.
///
/// A class's `var` of a class type is retained and released around many reads, because the compiler cannot prove
/// that nothing replaces it meanwhile. An owner that changes the reference only under a lock, and reads it under
/// that same lock, can lend it out without that pair (measured: reading a held permanent instance's box through a
/// strong property was a tenth of a cached permanent resolve).
///
/// ```swift
/// var held = ManuallyRetained(box)     // +1
/// held.withObject { $0.load(as: Int.self) }
/// held.release()                       // -1: `held` must not be used again
/// ```
///
/// Safe because — and only as long as — every `ManuallyRetained` is released exactly once (the owner's setter and
/// `deinit` do it), and no borrow outlives that release. With `ARBOR_INTERNAL_CHECKS` the borrow retains.
@usableFromInline
package struct ManuallyRetained<Object: AnyObject> {
    @usableFromInline let reference: Unmanaged<Object>

    /// Retains `object`; pair with one `release()`.
    @inlinable
    package init(_ object: Object) {
        reference = .passRetained(object)
    }

    /// The object, as a strong reference the caller retains for as long as it keeps it.
    @inlinable
    @inline(__always)
    package var object: Object { reference.takeUnretainedValue() }

    /// Lends the object to `body` without retaining it. `body` must not let it escape.
    @inlinable
    @inline(__always)
    package func withObject<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        #if ARBOR_INTERNAL_CHECKS
        let strong = reference.takeUnretainedValue()
        return try withExtendedLifetime(strong) { try body(strong) }
        #else
        try reference._withUnsafeGuaranteedRef(body)
        #endif
    }

    /// Gives up the reference `init` took.
    @inlinable
    package func release() {
        reference.release()
    }
}
