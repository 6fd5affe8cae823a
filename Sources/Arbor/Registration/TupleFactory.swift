/// A factory that takes its runtime arguments as one tuple in memory instead of a parameter pack.
///
/// `register(_:name:factory:)` wraps the factory it is given where the argument types are still known — inlined
/// into the caller, so the wrapper is specialised for them — and every resolve after that hands it its arguments as
/// one tuple (``ArgumentsTuple``). A function that forwards a parameter pack, in code that is not specialised, copies it
/// into a tuple whose metadata it looks up in the runtime's tables (measured: about 600 instructions and a copy of
/// each argument per function); this way, only the caller's specialised code ever sees a pack.
@usableFromInline
struct TupleFactory<Produced>: Sendable {
    /// Builds the service from the arguments, a tuple of the key's argument types.
    @usableFromInline let make: @Sendable (any Resolver, ArgumentsTuple) throws -> Produced

    /// Wraps `factory`, whose arguments are of the types `Argument...`.
    @inlinable
    init<each Argument>(_ factory: @escaping @Sendable (any Resolver, repeat each Argument) throws -> Produced) {
        make = { resolver, arguments in
            let arguments = arguments.load(as: (repeat each Argument).self)
            return try factory(resolver, repeat each arguments)
        }
    }
}
