/// A value of any type in memory of its own, read back without a dynamic cast.
///
/// `Any` would do, but reading an `Any` back as `Service` is a `swift_dynamicCast` (measured: about a tenth of a
/// cached permanent resolve), and for a service that is a protocol (`any Engine`) it also looks up the
/// conformance. A permanent registration's storage always holds its own `Service`, so it loads the value with
/// the type it already knows. A class, so a reader can keep the value alive after leaving the lock.
///
/// Safe because: `init` allocates memory sized and aligned for the value's static type and initializes it, the
/// value is never changed, and `deinit` destroys it as that same type (its metatype, opened) before freeing the
/// memory, exactly once. Readers must name the type the value was stored as (`ARBOR_INTERNAL_CHECKS` checks it).
@usableFromInline
package final class StoredValue {
    @usableFromInline let pointer: UnsafeMutableRawPointer
    /// The static type the value was stored as. Kept as a metatype, not as a generic witness type: a witness
    /// `TypedWitness<Value>` cost a generic-metadata look-up on every store (measured: 460 of the 670 instructions
    /// of storing a registered instance), where the metatype is at hand; the rare readers that do not know the type
    /// open it.
    @usableFromInline package let valueType: Any.Type

    @inlinable
    package init<Value>(_ value: Value) {
        pointer = .allocate(byteCount: MemoryLayout<Value>.size, alignment: MemoryLayout<Value>.alignment)
        pointer.initializeMemory(as: Value.self, repeating: value, count: 1)
        valueType = Value.self
    }

    deinit {
        func destroy<Value>(_: Value.Type) {
            pointer.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
        }
        _openExistential(valueType, do: destroy)
        pointer.deallocate()
    }

    /// The value; `Value` must be the type it was stored as.
    @inlinable
    package func load<Value>(as _: Value.Type) -> Value {
        internalInvariant(valueType == Value.self, "StoredValue holds a \(valueType), read as a \(Value.self)")
        return pointer.assumingMemoryBound(to: Value.self).pointee
    }

    /// The value as `Any`, for code that does not know its type.
    package var asAny: Any {
        func load<Value>(_: Value.Type) -> Any {
            pointer.assumingMemoryBound(to: Value.self).pointee
        }
        return _openExistential(valueType, do: load)
    }
}
