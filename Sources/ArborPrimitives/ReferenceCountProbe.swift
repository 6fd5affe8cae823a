// Public: the probe is inlined into Arbor, so the C atomics it calls must be visible there.
public import CArborSupport

/// Tells whether an object has `unowned` or `weak` references, without retaining it. With
/// `isKnownUniquelyReferenced`, which sees strong references only, it tells whether anything but its owner refers to
/// an object, however it refers to it: how a pooled resolution knows that no user code kept it and that it may be
/// reused.
///
/// On 64-bit platforms the Swift runtime keeps an object's counts in one word of its header, after the metadata
/// pointer: the unowned count (one more than the unowned references while the object is alive) in bits 1–31, the
/// strong count above them; the first weak reference moves the counts to a side table, marked by the word's top bit,
/// which stays after the weak reference is gone. So the probe reads one word and can only err one way: a side table
/// left by a weak reference that no longer exists makes the caller treat the object as referenced, which is always
/// safe. Strong references, which come and go as temporary copies, do not touch the bits it reads. Elsewhere it
/// asks the runtime (`references(of:)`), exact but three calls.
///
/// Measured (callgrind, per top-level resolve that ran a factory): 4 instructions on x86_64.
@usableFromInline
package enum ReferenceCountProbe {
    /// Whether `object` has `unowned` or `weak` references.
    @inlinable
    @inline(__always)
    package static func hasUnownedOrWeakReferences(_ object: AnyObject) -> Bool {
        #if _pointerBitWidth(_64)
        let word = countsWord(of: UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
        let found = showsUnownedOrWeak(word)
        #if ARBOR_INTERNAL_CHECKS
        let counts = references(of: object)
        assert(found == (counts.unowned > 1 || counts.weak > 1) || (found && word >> 63 != 0), "Probe: \(counts)")
        #endif
        return found
        #else
        let counts = references(of: object)
        return counts.unowned > 1 || counts.weak > 1
        #endif
    }

    /// Whether the object `object` points to (a reference the caller holds, unretained here) has no reference but
    /// that one: no other strong reference, and no `unowned` or `weak` one. How the hook queue tells an instance that
    /// only it still holds (``ValueStack/releaseIfOnlyHeldHere(at:)``). It errs only one way, as
    /// ``hasUnownedOrWeakReferences(_:)`` does: a side table (which a weak reference leaves behind, and which an
    /// immortal object has) reads as more references. The caller must hold its reference while it asks, and its
    /// answer is a snapshot: only someone who holds a reference can add one. Elsewhere than on 64-bit platforms,
    /// `false`.
    @inlinable
    package static func isOnlyReference(_ object: UnsafeRawPointer) -> Bool {
        #if _pointerBitWidth(_64)
        let word = countsWord(of: object)
        return !showsUnownedOrWeak(word) && (word >> 33) & 0x3FFF_FFFF == 0  // No strong reference beyond the first.
        #else
        return false
        #endif
    }

    #if _pointerBitWidth(_64)
    /// The word of the header of the object at `object` that holds its counts: the unowned count in bits 1–31, the
    /// strong references beyond the first in bits 33–62, and in bit 63 the mark of a side table.
    @inlinable
    @inline(__always)
    static func countsWord(of object: UnsafeRawPointer) -> UInt {
        UInt(bitPattern: carbor_load_relaxed(object.advanced(by: 8).assumingMemoryBound(to: Int.self)))
    }

    /// Whether a counts word shows `unowned` or `weak` references: a side table, or an unowned count above 1.
    @inlinable
    @inline(__always)
    static func showsUnownedOrWeak(_ word: UInt) -> Bool {
        word >> 63 != 0 || (word >> 1) & 0x7FFF_FFFF != 1
    }
    #endif

    /// The runtime's counts of an object's references: strong, unowned (one more while any strong reference
    /// exists) and weak (one more once a side table exists).
    @inlinable
    package static func references(of object: AnyObject) -> (strong: UInt, unowned: UInt, weak: UInt) {
        (_getRetainCount(object), _getUnownedRetainCount(object), _getWeakRetainCount(object))
    }
}
