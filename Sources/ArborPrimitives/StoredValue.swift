/// A value of any type in memory of its own, read back without a dynamic cast.
///
/// `Any` would do, but reading an `Any` back as `Service` is a `swift_dynamicCast` (measured: about a tenth of a
/// cached permanent resolve), and for a service that is a protocol (`any Engine`) it also looks up the
/// conformance. A permanent registration's storage always holds its own `Service`, so it loads the value with
/// the type it already knows. A class, so a reader can keep the value alive after leaving the lock.
///
/// Safe because: `init` allocates memory sized and aligned for the value's static type and initializes it, the
/// value is never changed, and `deinit` destroys it through the witness of that same type before freeing the
/// memory, exactly once. Readers must name the type the value was stored as (`ARBOR_INTERNAL_CHECKS` checks it).
@usableFromInline
package final class StoredValue {
    @usableFromInline let pointer: UnsafeMutableRawPointer
    /// Knows the static type the value was stored as.
    @usableFromInline let witness: any ValueWitness.Type

    @inlinable
    package init<Value>(_ value: Value) {
        pointer = .allocate(byteCount: MemoryLayout<Value>.size, alignment: MemoryLayout<Value>.alignment)
        pointer.initializeMemory(as: Value.self, repeating: value, count: 1)
        witness = TypedWitness<Value>.self
    }

    deinit {
        witness.destroy(pointer)
        pointer.deallocate()
    }

    /// The value; `Value` must be the type it was stored as.
    @inlinable
    package func load<Value>(as _: Value.Type) -> Value {
        internalInvariant(
            witness.valueType == Value.self, "StoredValue holds a \(witness.valueType), read as a \(Value.self)")
        return pointer.assumingMemoryBound(to: Value.self).pointee
    }

    /// The value as `Any`, for code that does not know its type.
    @inlinable
    package var asAny: Any { witness.load(pointer) }

    /// The static type the value was stored as.
    @inlinable
    package var valueType: Any.Type { witness.valueType }
}

/// What a ``StoredValue`` knows of its value's type, without being generic over it.
@usableFromInline
protocol ValueWitness {
    static var valueType: Any.Type { get }
    static func load(_ pointer: UnsafeMutableRawPointer) -> Any
    static func destroy(_ pointer: UnsafeMutableRawPointer)
}

@usableFromInline
enum TypedWitness<Value>: ValueWitness {
    @usableFromInline static var valueType: Any.Type { Value.self }

    @usableFromInline
    static func load(_ pointer: UnsafeMutableRawPointer) -> Any {
        pointer.assumingMemoryBound(to: Value.self).pointee
    }

    @usableFromInline
    static func destroy(_ pointer: UnsafeMutableRawPointer) {
        pointer.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
    }
}
