/// A reference to an object that does not keep it alive: an `Unmanaged` with the operations Arbor needs.
///
/// Passing or storing an `Unretained` costs no retain and no release, so it suits a reference that something else
/// is known to keep alive for as long as it is used: a registration its container keeps, the resolution a thread
/// holds. `withObject(_:)` lends the object to a closure, also without a retain (`_withUnsafeGuaranteedRef`).
///
/// Safe because — and only as long as — the object outlives every use of the reference: the code that makes an
/// `Unretained` must name what keeps the object alive, and every `object` or `withObject(_:)` must happen while
/// that owner still holds it. Comparing references (`==`, `refers(to:)`) and `toOpaque()` only read the address,
/// and are safe at any time, though an address can be reused once its object is gone.
///
/// With `ARBOR_INTERNAL_CHECKS` (`-Xswiftc -DARBOR_INTERNAL_CHECKS`), an `Unretained` also holds a strong
/// reference: the object lives as long as any copy of the reference, a borrow becomes a retain, and a use after
/// the owner let go of the object is no longer a use-after-free (it reads a live object). The reference is then two
/// words, not one, and objects are freed later than in a normal build: code that relies on an unretained reference
/// *not* keeping its object alive (a `deinit` that must run, a weak reference that must turn `nil`, a leak check)
/// behaves differently in that mode. A reference made with `retainedInChecks: false` stays unretained in that mode
/// too: for one whose strong version would change what the checks observe (a cache slot that would keep a container
/// alive, a thread's state that would keep its resolution from being freed).
@usableFromInline
package struct Unretained<Object: AnyObject> {
    @usableFromInline let reference: Unmanaged<Object>
    #if ARBOR_INTERNAL_CHECKS
    @usableFromInline let strong: Object?
    #endif

    /// A reference to `object`, which something else keeps alive.
    @inlinable
    @inline(__always)
    package init(_ object: borrowing Object) {
        // Borrowed: an initializer takes its arguments owned, which would cost the caller a retain and a release.
        reference = .passUnretained(object)
        #if ARBOR_INTERNAL_CHECKS
        strong = copy object
        #endif
    }

    /// A reference to `object`, which something else keeps alive; with `retainedInChecks: false`, unretained in an
    /// internal-checks build too.
    @inlinable
    @inline(__always)
    package init(_ object: borrowing Object, retainedInChecks: Bool) {
        reference = .passUnretained(object)
        #if ARBOR_INTERNAL_CHECKS
        strong = retainedInChecks ? copy object : nil
        #endif
    }

    /// A copy of `other` that, in an internal-checks build, retains its object (whether or not `other` does).
    @inlinable
    @inline(__always)
    package init(retaining other: Unretained<Object>) {
        reference = other.reference
        #if ARBOR_INTERNAL_CHECKS
        strong = other.object
        #endif
    }

    /// The reference an `Unmanaged` holds, without changing its reference count.
    @inlinable
    @inline(__always)
    package init(_ unmanaged: Unmanaged<Object>) {
        reference = unmanaged
        #if ARBOR_INTERNAL_CHECKS
        strong = unmanaged.takeUnretainedValue()
        #endif
    }

    /// The reference behind a pointer from `toOpaque()`, whose object is still alive.
    @inlinable
    @inline(__always)
    package init(fromOpaque pointer: UnsafeRawPointer) {
        self.init(Unmanaged<Object>.fromOpaque(pointer))
    }

    /// The reference behind a pointer from `toOpaque()`, whose object is still alive; with
    /// `retainedInChecks: false`, unretained in an internal-checks build too.
    @inlinable
    @inline(__always)
    package init(fromOpaque pointer: UnsafeRawPointer, retainedInChecks: Bool) {
        reference = Unmanaged<Object>.fromOpaque(pointer)
        #if ARBOR_INTERNAL_CHECKS
        strong = retainedInChecks ? reference.takeUnretainedValue() : nil
        #endif
    }

    /// The object, as a strong reference: the caller retains it for as long as it keeps it.
    @inlinable
    @inline(__always)
    package var object: Object {
        #if ARBOR_INTERNAL_CHECKS
        strong ?? reference.takeUnretainedValue()
        #else
        reference.takeUnretainedValue()
        #endif
    }

    /// Lends the object to `body` without retaining it (with `ARBOR_INTERNAL_CHECKS`, `body` gets a retained one).
    /// `body` must not let the object escape.
    @inlinable
    @inline(__always)
    package func withObject<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        #if ARBOR_INTERNAL_CHECKS
        if let strong { return try withExtendedLifetime(strong) { try body(strong) } }
        return try reference._withUnsafeGuaranteedRef(body)
        #else
        try reference._withUnsafeGuaranteedRef(body)
        #endif
    }

    /// The reference as an `Unmanaged`, for code that still works with those.
    @inlinable
    @inline(__always)
    package var unmanaged: Unmanaged<Object> { reference }

    /// The object's address, for C or a thread-local variable; `init(fromOpaque:)` turns it back.
    @inlinable
    @inline(__always)
    package func toOpaque() -> UnsafeMutableRawPointer {
        reference.toOpaque()
    }

    /// Whether this is a reference to `other`. Reads no more than the two addresses.
    @inlinable
    @inline(__always)
    package func refers(to other: Object) -> Bool {
        reference.toOpaque() == Unmanaged.passUnretained(other).toOpaque()
    }
}

/// Two references are equal when they refer to the same object.
extension Unretained: Hashable {
    @inlinable
    @inline(__always)
    package static func == (lhs: Unretained, rhs: Unretained) -> Bool {
        lhs.reference.toOpaque() == rhs.reference.toOpaque()
    }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        hasher.combine(reference.toOpaque())
    }
}

extension Unretained: @unchecked Sendable where Object: Sendable {}
