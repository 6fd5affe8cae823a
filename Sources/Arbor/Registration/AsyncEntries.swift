internal import ArborPrimitives
internal import Dispatch

/// How a registration's factory runs.
///
/// A synchronous resolve calls every entry's synchronous `factory`. For an `async` or main-actor factory that one is a
/// stand-in that throws ``AsyncOnly`` (or, for a main-actor factory on the main thread, runs it there), so the
/// synchronous engine needs no check of its own; an `async` resolve reads the kind and calls the entry's
/// `asyncFactory` instead.
@usableFromInline
enum FactoryKind: UInt8, Sendable {
    /// A synchronous factory: both engines call it directly.
    case synchronous
    /// An `async` factory: only an `async` resolve can build it.
    case async
    /// A synchronous factory isolated to the main actor: built on the main thread by either engine; an `async`
    /// resolve goes to the main actor to build it.
    case mainActor
}

/// The error a stand-in factory or hook throws when a synchronous resolve meets what only an `async` one can do. The
/// resolution turns it into ``ResolutionError/Reason/asyncRequired`` with the path.
@usableFromInline
struct AsyncOnly: Error {
    @usableFromInline
    enum Cause: Sendable {
        /// The service's factory is `async`.
        case asyncFactory
        /// The service's factory runs on the main actor, and the resolve does not.
        case mainActorFactory
        /// One of the service's `initCompleted` hooks is `async`.
        case asyncHook
        /// One of the service's `initCompleted` hooks runs on the main actor, and the resolve does not.
        case mainActorHook
    }

    let cause: Cause

    @usableFromInline
    init(cause: Cause) {
        self.cause = cause
    }

    /// What the error's description says, after "Arbor could not resolve X synchronously:".
    var explanation: String {
        switch cause {
        case .asyncFactory:
            "its factory is async. Resolve it with `try await` from async code; a synchronous factory that needs it "
                + "must become async too (`{ r async throws in … try await r.resolve(…) }`)."
        case .mainActorFactory:
            "its factory is isolated to the main actor (@MainActor), and this resolve runs off it. Resolve it on the "
                + "main actor, or with `try await`, which goes to the main actor to build it."
        case .asyncHook:
            "one of its initCompleted hooks is async. Resolve it with `try await` from async code."
        case .mainActorHook:
            "one of its initCompleted hooks is isolated to the main actor (@MainActor), and this resolve runs off it. "
                + "Resolve it on the main actor, or with `try await`, which goes to the main actor to run the hook."
        }
    }
}

/// Whether the calling code runs on the main actor, so a `@MainActor` closure may be called synchronously: on the main
/// thread, or in a job of the main dispatch queue, the main actor's executor. (On Linux, once the main thread has
/// handed the main queue to `dispatchMain()`, other threads drain it: the main actor is not always the main thread.)
/// A `false` where the main actor runs elsewhere only makes a synchronous resolve throw, never crash.
@usableFromInline
func isOnMainActor() -> Bool {
    MainThread.isCurrent || DispatchQueue.getSpecific(key: MainQueueMarker.key) != nil
}

/// A value only the main dispatch queue carries.
enum MainQueueMarker {
    static let key: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()
}

/// The entry of a service without runtime arguments whose factory is `async` or isolated to the main actor.
///
/// `factory`, the one a synchronous resolve calls, is a stand-in: it throws ``AsyncOnly`` for an `async` factory, and
/// for a main-actor one it runs the factory when called on the main thread. `asyncFactory` is what an `async` resolve
/// awaits.
@usableFromInline
final class AsyncNullaryEntry<Produced>: NullaryEntry<Produced>, @unchecked Sendable {
    @usableFromInline let asyncFactory: @Sendable (any Resolver) async throws -> Produced

    init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        factoryKind: FactoryKind,
        synchronousFactory: @escaping @Sendable (any Resolver) throws -> Produced,
        asyncFactory: @escaping @Sendable (any Resolver) async throws -> Produced
    ) {
        self.asyncFactory = asyncFactory
        super.init(
            key: key, token: token, configuration: configuration, factoryKind: factoryKind,
            factory: synchronousFactory)
    }

    /// An entry whose `async` resolve calls the synchronous `factory`: what `NullaryEntry`'s required initialiser
    /// makes. Unused by `register`, which always names the kind.
    required init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        factory: @escaping @Sendable (any Resolver) throws -> Produced
    ) {
        asyncFactory = { resolver in try factory(resolver) }
        super.init(key: key, token: token, configuration: configuration, factory: factory)
    }

    override func with(_ configuration: EntryConfiguration, token: RegistrationToken) -> ServiceEntry {
        AsyncNullaryEntry(
            key: key, token: token, configuration: configuration, factoryKind: factoryKind,
            synchronousFactory: factory, asyncFactory: asyncFactory)
    }

    /// Awaits the factory of `entry`, an `AsyncNullaryEntry<Produced>`: a reinterpretation, like
    /// `NullaryEntry.build`. Call only for an entry whose kind is not ``FactoryKind/synchronous``.
    /// Inlined into the `async` conveniences (AsyncPlainPath.swift), where `Produced` is concrete.
    @inlinable
    @inline(__always)
    static func asyncFactory(of entry: ServiceEntry) -> @Sendable (any Resolver) async throws -> Produced {
        // `unsafeDowncast`, not `knownDowncast`: this is inlined into the caller's module, which does not see
        // ArborPrimitives. A debug build's `unsafeDowncast` checks the type.
        unsafeDowncast(entry, to: AsyncNullaryEntry<Produced>.self).asyncFactory
    }

    @inline(__always)
    static func buildAsync(_ entry: ServiceEntry, _ resolver: any Resolver) async throws -> Produced {
        try await knownDowncast(entry, to: AsyncNullaryEntry<Produced>.self).asyncFactory(resolver)
    }

    override func validate(in container: Container) throws {
        // A synchronous `validate()` cannot build it; `validate()` records the registration's edges without it.
        throw AsyncOnly(cause: factoryKind == .mainActor ? .mainActorFactory : .asyncFactory)
    }
}

/// ``AsyncNullaryEntry`` for a service whose factory takes runtime arguments.
final class AsyncArgumentsEntry<Produced>: ArgumentsEntry<Produced>, @unchecked Sendable {
    let asyncFactory: AsyncTupleFactory<Produced>

    init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        factoryKind: FactoryKind,
        synchronousFactory: TupleFactory<Produced>,
        asyncFactory: AsyncTupleFactory<Produced>
    ) {
        self.asyncFactory = asyncFactory
        super.init(
            key: key, token: token, configuration: configuration, factoryKind: factoryKind,
            factory: synchronousFactory)
    }

    override func with(_ configuration: EntryConfiguration, token: RegistrationToken) -> ServiceEntry {
        AsyncArgumentsEntry(
            key: key, token: token, configuration: configuration, factoryKind: factoryKind,
            synchronousFactory: factory, asyncFactory: asyncFactory)
    }

    /// Awaits the factory of `entry`, an `AsyncArgumentsEntry<Produced>`, with the arguments at `arguments`.
    @inline(__always)
    static func buildAsync(
        _ entry: ServiceEntry, _ resolver: any Resolver, arguments: AsyncArgumentsBox
    ) async throws -> Produced {
        try await knownDowncast(entry, to: AsyncArgumentsEntry<Produced>.self).asyncFactory.make(resolver, arguments)
    }
}

/// ``TupleFactory`` for an `async` factory: it takes its runtime arguments as one tuple, copied out of the caller's
/// frame before the first suspension (``AsyncArgumentsBox``).
@usableFromInline
struct AsyncTupleFactory<Produced>: Sendable {
    @usableFromInline let make: @Sendable (any Resolver, AsyncArgumentsBox) async throws -> Produced

    /// Wraps `factory`, whose arguments are of the types `Argument...`.
    @inlinable
    init<each Argument>(
        _ factory: @escaping @Sendable (any Resolver, repeat each Argument) async throws -> Produced
    ) {
        make = { resolver, arguments in
            let arguments = arguments.load(as: (repeat each Argument).self)
            return try await factory(resolver, repeat each arguments)
        }
    }

    /// Wraps a main-actor `factory`, which runs on the main actor: its arguments go there.
    @inlinable
    init<each Argument: Sendable>(
        mainActor factory: @escaping @MainActor @Sendable (any Resolver, repeat each Argument) throws -> Produced
    ) where Produced: Sendable {
        make = { resolver, arguments in
            let arguments = arguments.load(as: (repeat each Argument).self)
            return try await runOnMainActor(for: resolver) { try factory(resolver, repeat each arguments) }
        }
    }
}

/// The runtime arguments of an `async` resolve, as one tuple in a box of their own: an `async` function's frame may
/// move between suspensions, so the arguments live in memory that stays put until the factory has read them.
///
/// A registration is found under the key that names the argument types exactly, so the box always holds the tuple
/// its factory reads; the read is a checked cast all the same. `@unchecked Sendable`: the arguments go from the
/// resolve's caller to the factory, like the arguments of any function call.
@usableFromInline
class AsyncArgumentsBox: @unchecked Sendable {
    @usableFromInline init() {}

    /// Runs `body` with the arguments laid out as one tuple, for a synchronous factory (``ArgumentsTuple``).
    func withArgumentsTuple<Result>(_ body: (ArgumentsTuple) throws -> Result) rethrows -> Result {
        preconditionFailure("Every box is a TupleBox.")
    }

    /// The arguments, as the tuple of the types they were given with.
    @inlinable
    func load<Tuple>(as _: Tuple.Type) -> Tuple {
        (self as! TupleBox<Tuple>).tuple
    }

    /// A box of `arguments`.
    @inlinable
    static func make<each Argument>(_ arguments: repeat each Argument) -> AsyncArgumentsBox {
        TupleBox((repeat each arguments))
    }
}

/// An ``AsyncArgumentsBox`` holding a tuple of `Tuple`.
@usableFromInline
final class TupleBox<Tuple>: AsyncArgumentsBox, @unchecked Sendable {
    @usableFromInline let tuple: Tuple

    @usableFromInline
    init(_ tuple: Tuple) {
        self.tuple = tuple
    }

    override func withArgumentsTuple<Result>(_ body: (ArgumentsTuple) throws -> Result) rethrows -> Result {
        var copy = tuple
        return try ArgumentsTuple.with(tuple: &copy, do: body)
    }
}
