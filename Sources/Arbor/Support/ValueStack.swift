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
struct ValueStack {
    /// Where one value lives in `values`, and its type, which destroys or moves it.
    private struct Record {
        let offset: Int
        let type: Any.Type
        /// The value is a class instance: one strong reference, released without a generic call (measured: the
        /// generic destroy cost more than storing and finding the instance).
        let isObject: Bool
    }

    private var records = UnsafeStack<Record>()
    private var values: UnsafeMutableRawPointer
    private var capacity = 512
    private var used = 0
    /// Enough for any type: the buffer's address is a multiple of every alignment a value can ask for.
    private static let alignment = 64

    init() {
        values = .allocate(byteCount: capacity, alignment: Self.alignment)
    }

    /// Pushes a copy of `value` and returns its position.
    @inline(__always)
    @discardableResult
    mutating func push<Value>(_ value: Value) -> Int {
        let offset = (used + MemoryLayout<Value>.alignment - 1) & ~(MemoryLayout<Value>.alignment - 1)
        let end = offset + MemoryLayout<Value>.size
        if end > capacity { grow(toHold: end) }
        (values + offset).assumingMemoryBound(to: Value.self).initialize(to: value)
        used = end
        records.push(Record(offset: offset, type: Value.self, isObject: Value.self is AnyClass))
        return records.count - 1
    }

    /// The value at `position`, which was pushed as a `Value`.
    @inline(__always)
    func value<Value>(at position: Int, as _: Value.Type) -> Value {
        address(of: position).assumingMemoryBound(to: Value.self).pointee
    }

    /// Where the value at `position` is, for a caller that knows its type. Valid until the next `push`.
    @inline(__always)
    func address(of position: Int) -> UnsafeMutableRawPointer {
        values + records[position].offset
    }

    /// Releases every value, keeping the buffers for reuse.
    mutating func removeAll() {
        guard !records.isEmpty else { return }
        destroyAll()
        records.removeAll()
        used = 0
    }

    func deallocate() {
        destroyAll()
        records.deallocate()
        values.deallocate()
    }

    private func destroyAll() {
        for record in records.elements {
            if record.isObject {
                Unmanaged<AnyObject>.fromOpaque((values + record.offset).load(as: UnsafeRawPointer.self)).release()
            } else {
                destroy(record.type, at: values + record.offset)
            }
        }
    }

    /// Moves every value to a buffer at least twice as large, which holds `byteCount` bytes.
    private mutating func grow(toHold byteCount: Int) {
        var larger = capacity * 2
        while larger < byteCount { larger *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: Self.alignment)
        for record in records.elements {
            move(record.type, from: values + record.offset, to: moved + record.offset)
        }
        values.deallocate()
        values = moved
        capacity = larger
    }
}

private func destroy<Value>(_: Value.Type, at address: UnsafeMutableRawPointer) {
    _ = address.assumingMemoryBound(to: Value.self).move()  // `deinitialize(count:)` loops in the runtime.
}

private func move<Value>(_: Value.Type, from source: UnsafeMutableRawPointer, to target: UnsafeMutableRawPointer) {
    target.initializeMemory(as: Value.self, to: source.assumingMemoryBound(to: Value.self).move())
}
