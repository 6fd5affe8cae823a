/// A value of any type in memory of its own, read back without a dynamic cast.
///
/// `Any` would do, but reading an `Any` back as `Service` is a `swift_dynamicCast` (measured: about a tenth of a
/// cached permanent resolve), and for a service that is a protocol (`any Engine`) it also looks up the
/// conformance. A permanent registration's storage always holds its own `Service`, so it loads the value with
/// the type it already knows. A class, so a reader can keep the value alive after leaving the lock.
final class StoredValue {
    private let pointer: UnsafeMutableRawPointer
    /// Knows the static type the value was stored as.
    private let witness: any ValueWitness.Type

    init<Value>(_ value: Value) {
        pointer = .allocate(byteCount: MemoryLayout<Value>.size, alignment: MemoryLayout<Value>.alignment)
        pointer.initializeMemory(as: Value.self, repeating: value, count: 1)
        witness = TypedWitness<Value>.self
    }

    deinit {
        witness.destroy(pointer)
        pointer.deallocate()
    }

    /// The value; `Value` must be the type it was stored as.
    func load<Value>(as _: Value.Type) -> Value {
        pointer.assumingMemoryBound(to: Value.self).pointee
    }

    /// The value as `Any`, for code that does not know its type.
    var asAny: Any { witness.load(pointer) }
}

private protocol ValueWitness {
    static func load(_ pointer: UnsafeMutableRawPointer) -> Any
    static func destroy(_ pointer: UnsafeMutableRawPointer)
}

private enum TypedWitness<Value>: ValueWitness {
    static func load(_ pointer: UnsafeMutableRawPointer) -> Any {
        pointer.assumingMemoryBound(to: Value.self).pointee
    }

    static func destroy(_ pointer: UnsafeMutableRawPointer) {
        pointer.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
    }
}
