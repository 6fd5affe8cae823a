/// The runtime arguments of one resolve, laid out once as a tuple in the caller's frame, and read in place by the
/// factory: no code in between copies them or is generic over their types (see ``TupleFactory``).
///
/// Safe because: an `ArgumentsTuple` exists only inside ``with(_:do:)`` or ``with(tuple:do:)``, which keeps the tuple alive and unmoved while
/// its body runs, and nothing stores one; and it is read only as the tuple of the key's argument types — the types
/// it was laid out with, since a registration is found under the key that names them exactly.
@usableFromInline
struct ArgumentsTuple {
    @usableFromInline let address: UnsafeRawPointer
    #if ARBOR_INTERNAL_CHECKS
    /// The type of the tuple: an internal-checks build checks that it is read as what it is.
    @usableFromInline let tupleType: Any.Type
    #endif

    @inlinable
    init<Tuple>(address: UnsafePointer<Tuple>) {
        self.address = UnsafeRawPointer(address)
        #if ARBOR_INTERNAL_CHECKS
        tupleType = Tuple.self
        #endif
    }

    /// Lays `arguments` out as one tuple and runs `body` with it.
    @inlinable
    @inline(__always)
    static func with<each Argument, Result>(
        _ arguments: repeat each Argument,
        do body: (ArgumentsTuple) throws -> Result
    ) rethrows -> Result {
        var tuple = (repeat each arguments)
        return try withUnsafePointer(to: &tuple) { try body(ArgumentsTuple(address: $0)) }
    }

    /// Runs `body` with `tuple`, arguments already laid out as one tuple: what a caller that knows their types does
    /// (a scalar and a pack handed on together as one pack crashed this compiler).
    @inlinable
    @inline(__always)
    static func with<Tuple, Result>(
        tuple: inout Tuple,
        do body: (ArgumentsTuple) throws -> Result
    ) rethrows -> Result {
        try withUnsafePointer(to: &tuple) { try body(ArgumentsTuple(address: $0)) }
    }

    /// The arguments, as the tuple of the types they were laid out with.
    @inlinable
    @inline(__always)
    func load<Tuple>(as _: Tuple.Type) -> Tuple {
        #if ARBOR_INTERNAL_CHECKS
        precondition(tupleType == Tuple.self, "arguments laid out as \(tupleType), read as \(Tuple.self)")
        #endif
        return address.assumingMemoryBound(to: Tuple.self).pointee
    }
}
