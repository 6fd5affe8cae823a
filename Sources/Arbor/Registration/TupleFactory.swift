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

    /// A factory that throws `error` whatever its arguments: the stand-in a synchronous resolve calls for an `async`
    /// factory (see ``FactoryKind``).
    @usableFromInline
    init(failing error: AsyncOnly) {
        make = { _, _ in throw error }
    }

    /// Wraps a main-actor `factory`: run on the main thread, it calls the factory there; elsewhere it throws.
    @inlinable
    init<each Argument>(
        mainActor factory: @escaping @MainActor @Sendable (any Resolver, repeat each Argument) throws -> Produced
    ) where Produced: Sendable {
        make = { resolver, arguments in
            guard isOnMainActor() else { throw AsyncOnly(cause: .mainActorFactory) }
            // The arguments go from the resolve's caller to the factory, as in any call.
            let arguments = UncheckedSendable(arguments.load(as: (repeat each Argument).self))
            return try MainActor.assumeIsolated { try factory(resolver, repeat each arguments.value) }
        }
    }
}
