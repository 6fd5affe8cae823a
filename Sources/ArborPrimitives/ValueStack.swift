/// Values of any types, each kept with the static type it was pushed with and read back with that same type: no
/// `Any` box to build, no dynamic type to look up, no cast.
///
/// The resolution keeps its graph-scoped instances and the instances waiting for their `initCompleted` hooks here.
/// A resolve always knows the type of the instance it asks for, so it never needs to ask the stack (measured: with
/// `Any`, the box and the cast back were a third of a graph-scoped resolve, and for a service registered as a
/// protocol the cast also looked up the conformance).
///
/// The values live in one buffer the stack manages itself, each aligned for its type; the buffer moves them with
/// their own type when it grows. It belongs to one resolution, used from one thread at a time. Free it with
/// `deallocate()`.
///
/// Safe because: each record names the offset and the type of one initialized value; offsets are aligned for
/// their types (the buffer's own alignment, 64, is a multiple of every alignment a type can have), the values do
/// not overlap, and all lie below `used`, which is at most `capacity`. Values are destroyed, and moved when the
/// buffer grows, with the type their record keeps, so each is deinitialized exactly once. A caller reads a value
/// with the type it pushed it with, and uses an address from `address(of:)` only until the next `push`. Like
/// ``UnsafeStack``, the stack owns its buffers without a reference count: one copy, one thread at a time, one
/// `deallocate()`. `ARBOR_INTERNAL_CHECKS` checks positions, the type a value is read with, and the layout.
@usableFromInline
package struct ValueStack {
    /// Where one value lives in `values`, and its type, which destroys or moves it.
    @usableFromInline
    struct Record {
        @usableFromInline let offset: Int
        @usableFromInline let type: Any.Type
        /// The value is a class instance: one strong reference, released without a generic call (measured: the
        /// generic destroy cost more than storing and finding the instance).
        @usableFromInline let isObject: Bool

        @inlinable
        init(offset: Int, type: Any.Type, isObject: Bool) {
            self.offset = offset
            self.type = type
            self.isObject = isObject
        }
    }

    @usableFromInline var records = UnsafeStack<Record>()
    @usableFromInline var values: UnsafeMutableRawPointer
    @usableFromInline var capacity = 512
    @usableFromInline var used = 0
    /// Enough for any type: the buffer's address is a multiple of every alignment a value can ask for.
    @usableFromInline static let alignment = 64

    @inlinable
    package init() {
        values = .allocate(byteCount: capacity, alignment: Self.alignment)
    }

    /// How many values the stack holds.
    @inlinable
    package var count: Int { records.count }

    /// Pushes a copy of `value` and returns its position.
    @inlinable
    @inline(__always)
    @discardableResult
    package mutating func push<Value>(_ value: Value) -> Int {
        let offset = (used + MemoryLayout<Value>.alignment - 1) & ~(MemoryLayout<Value>.alignment - 1)
        let end = offset + MemoryLayout<Value>.size
        if end > capacity { grow(toHold: end) }
        (values + offset).assumingMemoryBound(to: Value.self).initialize(to: value)
        used = end
        records.push(Record(offset: offset, type: Value.self, isObject: Value.self is AnyClass))
        #if ARBOR_INTERNAL_CHECKS
        checkRecord(at: records.count - 1)
        #endif
        return records.count - 1
    }

    /// The value at `position`, which was pushed as a `Value`.
    @inlinable
    @inline(__always)
    package func value<Value>(at position: Int, as _: Value.Type) -> Value {
        internalInvariant(
            records[position].type == Value.self,
            "ValueStack value at \(position) is a \(records[position].type), read as a \(Value.self)")
        return address(of: position).assumingMemoryBound(to: Value.self).pointee
    }

    /// Where the value at `position` is, for a caller that knows its type. Valid until the next `push`.
    @inlinable
    @inline(__always)
    package func address(of position: Int) -> UnsafeMutableRawPointer {
        values + records[position].offset
    }

    /// The value at `position`, as a ``Location``. Valid until the next `push`.
    @inlinable
    @inline(__always)
    package func location(of position: Int) -> Location {
        #if ARBOR_INTERNAL_CHECKS
        Location(address: address(of: position), type: records[position].type)
        #else
        Location(address: address(of: position))
        #endif
    }

    /// Where one value of a stack is, for code that knows its type but not the stack: what a type-erased closure is
    /// handed. Valid until the stack's next `push`, like ``address(of:)``.
    @usableFromInline
    package struct Location {
        @usableFromInline let address: UnsafeMutableRawPointer
        #if ARBOR_INTERNAL_CHECKS
        @usableFromInline let type: Any.Type

        @inlinable
        init(address: UnsafeMutableRawPointer, type: Any.Type) {
            self.address = address
            self.type = type
        }
        #else
        @inlinable
        init(address: UnsafeMutableRawPointer) {
            self.address = address
        }
        #endif

        /// A copy of the value, which was pushed as a `Value`.
        @inlinable
        @inline(__always)
        package func copy<Value>(as _: Value.Type) -> Value {
            #if ARBOR_INTERNAL_CHECKS
            precondition(type == Value.self, "ValueStack value is a \(type), read as a \(Value.self)")
            #endif
            return address.assumingMemoryBound(to: Value.self).pointee
        }

        /// Lends the object the value refers to — it was pushed as an `Object`, one reference — to `body`, without a
        /// retain: the stack keeps it alive for as long as `body` runs, wherever its values move meanwhile (a `push`
        /// that grows the buffer moves the reference, not the object). `body` must not let it escape.
        @inlinable
        @inline(__always)
        package func withObject<Object: AnyObject, Result>(
            as _: Object.Type,
            _ body: (Object) throws -> Result
        ) rethrows -> Result {
            #if ARBOR_INTERNAL_CHECKS
            precondition(type == Object.self, "ValueStack value is a \(type), read as a \(Object.self)")
            #endif
            return try Unretained<Object>(fromOpaque: address.load(as: UnsafeRawPointer.self)).withObject(body)
        }
    }

    /// Releases every value, keeping the buffers for reuse.
    @inlinable
    package mutating func removeAll() {
        guard !records.isEmpty else { return }
        destroyAll()
        records.removeAll()
        used = 0
    }

    /// Releases the value at `position` if it is an object — a class instance, or one in a protocol existential — that
    /// nothing else refers to (``ReferenceCountProbe/isOnlyReference(_:)``), and leaves an empty value in its place,
    /// which must not be read; whether it did. Any other value stays, as does an object referred to elsewhere.
    package mutating func releaseIfOnlyHeldHere(at position: Int) -> Bool {
        let record = records[position]
        let address = values + record.offset
        if record.isObject {
            guard ReferenceCountProbe.isOnlyReference(address.load(as: UnsafeRawPointer.self)) else { return false }
        } else {
            guard let object = objectInside(record.type, at: address), ReferenceCountProbe.isOnlyReference(object)
            else { return false }
        }
        // Emptied first, so that nothing the release runs (a deinit) finds the value here.
        records[position] = Record(offset: record.offset, type: Void.self, isObject: false)
        destroyValue(record.type, at: address)
        return true
    }

    /// Releases every value and frees the buffers. The stack must not be used after this.
    @inlinable
    package func deallocate() {
        destroyAll()
        records.deallocate()
        values.deallocate()
    }

    @inlinable
    func destroyAll() {
        #if ARBOR_INTERNAL_CHECKS
        checkInvariants()
        #endif
        for record in records.elements {
            if record.isObject {
                Unmanaged<AnyObject>.fromOpaque((values + record.offset).load(as: UnsafeRawPointer.self)).release()
            } else {
                destroyValue(record.type, at: values + record.offset)
            }
        }
    }

    /// Moves every value to a buffer at least twice as large, which holds `byteCount` bytes.
    @usableFromInline
    mutating func grow(toHold byteCount: Int) {
        var larger = capacity * 2
        while larger < byteCount { larger *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: Self.alignment)
        for record in records.elements {
            moveValue(record.type, from: values + record.offset, to: moved + record.offset)
        }
        values.deallocate()
        values = moved
        capacity = larger
        #if ARBOR_INTERNAL_CHECKS
        checkInvariants()
        #endif
    }

    #if ARBOR_INTERNAL_CHECKS
    /// Every record is aligned for its type, in bounds, and after the one before it.
    @usableFromInline
    func checkInvariants() {
        precondition(used >= 0 && used <= capacity, "ValueStack uses \(used) of \(capacity) bytes")
        precondition(Int(bitPattern: values) % Self.alignment == 0, "ValueStack buffer misaligned")
        for position in 0..<records.count { checkRecord(at: position) }
    }

    @usableFromInline
    func checkRecord(at position: Int) {
        let record = records[position]
        let (size, alignment) = layout(of: record.type)
        precondition(record.offset % alignment == 0, "ValueStack value \(position) misaligned for \(record.type)")
        precondition(record.offset + size <= used, "ValueStack value \(position) ends past the used bytes")
        if position > 0 {
            let previous = records[position - 1]
            precondition(
                record.offset >= previous.offset + layout(of: previous.type).size,
                "ValueStack value \(position) overlaps the one before")
        }
        precondition(record.isObject == (record.type is AnyClass), "ValueStack value \(position) kind is wrong")
    }
    #endif
}

#if ARBOR_INTERNAL_CHECKS
private func layout<Value>(of _: Value.Type) -> (size: Int, alignment: Int) {
    (MemoryLayout<Value>.size, MemoryLayout<Value>.alignment)
}
#endif

@usableFromInline
func destroyValue<Value>(_: Value.Type, at address: UnsafeMutableRawPointer) {
    _ = address.assumingMemoryBound(to: Value.self).move()  // `deinitialize(count:)` loops in the runtime.
}

/// The object a value of type `Value` at `address` holds, if it is one (a class instance, also in an existential):
/// the reference, unretained, once the temporary copies made to find it are gone; `nil` for any other value.
@inline(never)
func objectInside<Value>(_: Value.Type, at address: UnsafeMutableRawPointer) -> UnsafeRawPointer? {
    let value = address.assumingMemoryBound(to: Value.self)
    // `as Any`: for an existential `Value`, `type(of:)` of the value itself is the existential's type here.
    guard type(of: value.pointee as Any) is AnyClass else { return nil }
    return UnsafeRawPointer(Unmanaged.passUnretained(value.pointee as AnyObject).toOpaque())
}

@usableFromInline
func moveValue<Value>(_: Value.Type, from source: UnsafeMutableRawPointer, to target: UnsafeMutableRawPointer) {
    target.initializeMemory(as: Value.self, to: source.assumingMemoryBound(to: Value.self).move())
}
