/// A value of any type in memory of its own, read back without a dynamic cast.
///
/// `Any` would do, but reading an `Any` back as `Service` is a `swift_dynamicCast` (measured: about a tenth of a
/// cached permanent resolve), and for a service that is a protocol (`any Engine`) it also looks up the
/// conformance. A permanent registration's storage always holds its own `Service`, so it loads the value with
/// the type it already knows. A class, so a reader can keep the value alive after leaving the lock.
///
/// The value lives in the object's own tail: one allocation, not two. (Measured: the separate allocation of the
/// value was 32 heap bytes a held instance, and a `malloc` and a `free` a build.)
///
/// Safe because: `make` allocates a buffer with room for the value at its alignment, initializes the value there
/// and records its address and static type in the header before returning; the value is never changed, and
/// `deinit` destroys it as that same type (its metatype, opened), exactly once, before the buffer is freed.
/// Readers must name the type the value was stored as (`ARBOR_INTERNAL_CHECKS` checks it).
@usableFromInline
package final class StoredValue: ManagedBuffer<StoredValue.Layout, UInt8> {
    /// Where the value is, in the buffer's elements, and the static type it was stored as.
    @usableFromInline
    package struct Layout {
        @usableFromInline package let pointer: UnsafeMutableRawPointer
        /// Kept as a metatype, not as a generic witness type: a witness `TypedWitness<Value>` cost a
        /// generic-metadata look-up on every store (measured: 460 of the 670 instructions of storing a registered
        /// instance), where the metatype is at hand; the rare readers that do not know the type open it.
        @usableFromInline package let valueType: Any.Type

        @usableFromInline
        init(pointer: UnsafeMutableRawPointer, valueType: Any.Type) {
            self.pointer = pointer
            self.valueType = valueType
        }
    }

    /// A stored copy of `value`.
    @inlinable
    package static func make<Value>(_ value: Value) -> StoredValue {
        let size = MemoryLayout<Value>.size
        let alignment = MemoryLayout<Value>.alignment
        let buffer = create(minimumCapacity: size + alignment - 1) { buffer in
            let elements = buffer.withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
            let pointer = elements.alignedUp(toMultipleOf: alignment)
            pointer.initializeMemory(as: Value.self, repeating: value, count: 1)
            return Layout(pointer: pointer, valueType: Value.self)
        }
        return unsafeDowncast(buffer, to: StoredValue.self)
    }

    deinit {
        let pointer = self.pointer
        func destroy<Value>(_: Value.Type) {
            pointer.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
        }
        _openExistential(valueType, do: destroy)
    }

    /// The value's address. Read through the header pointer: the `header` property makes the runtime check
    /// exclusive access on every read.
    @inlinable
    var pointer: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToHeader { $0.pointee.pointer }
    }

    /// The static type the value was stored as.
    @inlinable
    package var valueType: Any.Type {
        withUnsafeMutablePointerToHeader { $0.pointee.valueType }
    }

    /// The value; `Value` must be the type it was stored as.
    @inlinable
    package func load<Value>(as _: Value.Type) -> Value {
        internalInvariant(valueType == Value.self, "StoredValue holds a \(valueType), read as a \(Value.self)")
        return pointer.assumingMemoryBound(to: Value.self).pointee
    }

    /// The class instance the value is or holds (``object(in:)``), or `nil` for a value of another kind.
    package var object: AnyObject? {
        let pointer = self.pointer
        func find<Value>(_: Value.Type) -> AnyObject? {
            ArborPrimitives.object(in: pointer.assumingMemoryBound(to: Value.self).pointee)
        }
        return _openExistential(valueType, do: find)
    }

    /// The value as `Any`, for code that does not know its type.
    package var asAny: Any {
        let pointer = self.pointer
        func load<Value>(_: Value.Type) -> Any {
            pointer.assumingMemoryBound(to: Value.self).pointee
        }
        return _openExistential(valueType, do: load)
    }
}
