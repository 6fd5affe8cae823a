internal import ArborPrimitives

/// A registration as a container stores it.
///
/// Once a look-up has found an entry (`isPublished`), it never changes, so a resolution reads it without holding a
/// lock. Configuring a registration (`inObjectScope`, `initCompleted`) then swaps in a reconfigured copy under the
/// container's lock; the copy keeps the `token`, which is how a ``Registration`` handle finds its entry again and
/// how a graph tells registrations apart. Before that — the usual `register(…).inObjectScope(…)` — no thread can
/// hold the entry, and a new scope or lifetime is set in place (measured: the copy, and freeing the original, were
/// half the cost of a registration); adding an `initCompleted` hook always makes a copy.
///
/// Two subclasses hold the factory: ``NullaryEntry`` for services without runtime arguments, the common case, and
/// ``ArgumentsEntry`` for those with. A resolve knows which one it found from the key, and calls the factory
/// through a reinterpreting downcast (`build`), which in a release build needs neither a dynamic cast nor the
/// subclass's metadata.
@usableFromInline
class ServiceEntry: @unchecked Sendable {
    @usableFromInline let key: ServiceKey
    let token: RegistrationToken
    // The configuration and what is derived from it change only while the entry is unpublished, under the owning
    // container's lock; the lock orders those writes before any read, so the runtime's exclusivity checks are off.
    @exclusivity(unchecked) final private(set) var configuration: EntryConfiguration
    /// What a resolve needs to know first, read without touching the configuration.
    @exclusivity(unchecked) final private(set) var shape: Shape
    @exclusivity(unchecked) final private(set) var hasHooks: Bool
    /// Transient or graph-scoped, and not a forward: a resolve needs the factory, and the hooks if it has any.
    @exclusivity(unchecked) final private(set) var isPlain: Bool
    // The one-byte fields sit together: stored properties are laid out in the order they are declared, and each
    // word-sized one after a byte pads to the next word (measured: a registration took 176 heap bytes, 152 now).
    let isForward: Bool
    /// How the factory runs: synchronously, `async`, or on the main actor (see ``FactoryKind``).
    let factoryKind: FactoryKind
    /// Set, under the owning container's lock, when a look-up first finds the entry: from then on threads may
    /// hold it in their look-up caches, so replacing it needs a version change and a retirement. The lock
    /// already makes accesses exclusive, so the runtime's exclusivity check is off.
    @exclusivity(unchecked) var isPublished = false
    /// The first of `hooks`, in a constant of its own: calling a closure kept in a `let` retains nothing, where
    /// one read from an array retains its context (and the array). Hooks are never changed in place.
    let firstHook: InitHook?
    /// `configuration.storage`, unretained (the configuration keeps it), for the resolve that reads it.
    @exclusivity(unchecked) final private(set) var heldStorage: Unretained<InstanceStorage>?

    /// How a resolve treats the entry.
    enum Shape {
        /// Builds every time.
        case transient
        /// Shares one instance per resolution.
        case graph
        /// Shares the instance its storage holds (permanent and weak scopes).
        case held
    }

    init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        isForward: Bool = false,
        factoryKind: FactoryKind = .synchronous
    ) {
        self.key = key
        self.token = token
        self.isForward = isForward
        self.factoryKind = factoryKind
        firstHook = configuration.hooks.first
        self.configuration = configuration
        (shape, hasHooks, isPlain, heldStorage) = Self.derived(from: configuration, key: key, isForward: isForward)
    }

    private static func derived(
        from configuration: EntryConfiguration, key: ServiceKey, isForward: Bool
    ) -> (Shape, Bool, Bool, Unretained<InstanceStorage>?) {
        let shape: Shape =
            switch configuration.scope.storage {
            case .none: .transient
            case .graph: .graph
            case .strong, .weak, .perContainer: .held
            }
        let hasHooks = !configuration.hooks.isEmpty
        let isPlain = shape != .held && !isForward
        return (shape, hasHooks, isPlain, configuration.storage.map { Unretained($0) })
    }

    /// The token's number: what tells registrations apart in a graph.
    final var identity: Int { token.value }

    final var scope: ObjectScope { configuration.scope }
    /// How the scope keeps instances, read without copying the scope (and retaining its name).
    final var storageKind: ObjectScope.Storage { configuration.scope.storage }
    final var hooks: [InitHook] { configuration.hooks }
    final var releaseHooks: [ReleaseHook] { configuration.releaseHooks }
    final var isShortLived: Bool { configuration.isShortLived }
    final var storage: InstanceStorage? { configuration.storage }

    /// The same factory with another identity and configuration. Each subclass builds its own type here, and
    /// nothing else: reconfiguring and copying are built on it.
    func with(_ configuration: EntryConfiguration, token: RegistrationToken) -> ServiceEntry {
        preconditionFailure("Every entry is a NullaryEntry, an ArgumentsEntry or a ForwardEntry.")
    }

    /// The entry of an instance registration kept pending (``PendingInstance``), made when it is filed, with a
    /// factory that gives the instance in `box` back, as `register(_:instance:)`'s does. Only ``NullaryEntry`` makes
    /// one.
    class func filed(
        key: ServiceKey, token: RegistrationToken, configuration: EntryConfiguration, box: StoredValue
    ) -> ServiceEntry {
        preconditionFailure("Only a NullaryEntry registers an instance.")
    }

    /// A copy with a changed configuration, for the same registration. Keeps the instance storage (and the
    /// instance) while the scope stays. Call with the container's lock held.
    final func reconfigured(in owner: Container, _ change: (inout EntryConfiguration) -> Void) -> ServiceEntry {
        with(reconfiguration(in: owner, change), token: token)
    }

    /// Changes the configuration in place, and returns the one it replaced, to be released after the lock. Only
    /// for an entry no look-up has found (`isPublished` false), with the container's lock held, and for a change
    /// that keeps the hooks (`firstHook` is a constant).
    final func reconfigureInPlace(
        in owner: Container, _ change: (inout EntryConfiguration) -> Void
    ) -> EntryConfiguration {
        let replaced = configuration
        configuration = reconfiguration(in: owner, change)
        assert(configuration.hooks.count == replaced.hooks.count, "Hooks are added by replacing the entry.")
        (shape, hasHooks, isPlain, heldStorage) = Self.derived(from: configuration, key: key, isForward: isForward)
        return replaced
    }

    /// Gives an entry no look-up has found (`isPublished` false) another scope, in place, and returns the storage
    /// it replaced. Call with the container's lock held.
    final func setScopeInPlace(_ newScope: ObjectScope, in owner: Container) -> InstanceStorage? {
        guard newScope != configuration.scope else { return nil }
        let replaced = configuration.storage
        configuration.scope = newScope
        configuration.storage = InstanceStorage.make(
            for: newScope, key: key, releaseHooks: configuration.releaseHooks, in: owner)
        (shape, hasHooks, isPlain, heldStorage) = Self.derived(from: configuration, key: key, isForward: isForward)
        return replaced
    }

    private func reconfiguration(
        in owner: Container, _ change: (inout EntryConfiguration) -> Void
    ) -> EntryConfiguration {
        var changed = configuration
        change(&changed)
        if changed.scope == scope, let storage {
            storage.setReleaseHooksLocked(changed.releaseHooks)
        } else {
            changed.storage = InstanceStorage.make(
                for: changed.scope, key: key, releaseHooks: changed.releaseHooks, in: owner)
        }
        return changed
    }

    /// A copy for another container, with an empty storage of its own: how `validate()` resolves without touching
    /// the real container's instances. Release hooks are not copied: the copies are dropped without closing.
    func copy(for owner: Container) -> ServiceEntry {
        var copied = configuration
        copied.releaseHooks = []
        copied.storage = InstanceStorage.make(for: scope, key: key, in: owner)
        return with(copied, token: RegistrationToken())
    }

    /// Resolves the entry's key from `container`, with its own types: how `validate()` checks a registration that
    /// needs no runtime arguments.
    func validate(in container: Container) throws {
        preconditionFailure("Only entries without arguments are validated this way.")
    }

    /// For a forward (`implements`): the key of the registration it forwards to. `nil` for everything else.
    var forwardTarget: ServiceKey? { nil }
}

/// How a registration is configured: everything `Registration`'s chained calls change.
struct EntryConfiguration {
    var scope: ObjectScope
    /// Set by `shortLived()`: `validate()` reports a permanent service that resolves it. (Next to the scope, whose
    /// last word has room for it.)
    var isShortLived = false
    var hooks: [InitHook] = []
    /// Run when the container drops an instance it holds strongly (`onRelease`).
    var releaseHooks: [ReleaseHook] = []
    /// Where permanent and weak instances live; `nil` for transient and graph scopes.
    var storage: InstanceStorage?
}

/// The entry of a service whose factory takes no runtime arguments.
///
/// `@usableFromInline`: the inlined `register` calls name `NullaryEntry<Service>.self` where `Service` is concrete.
///
/// Not final: ``AsyncNullaryEntry`` adds the factory an `async` resolve calls, and keeps in `factory` one that a
/// synchronous resolve calls instead, so that a synchronous resolve reinterprets either entry alike.
@usableFromInline
class NullaryEntry<Produced>: ServiceEntry, @unchecked Sendable {
    final let factory: @Sendable (any Resolver) throws -> Produced

    /// Required, so that `register` can make the entry through a metatype it was handed.
    required init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        factory: @escaping @Sendable (any Resolver) throws -> Produced
    ) {
        self.factory = factory
        super.init(key: key, token: token, configuration: configuration)
    }

    /// An entry whose factory runs as `factoryKind` says (``AsyncNullaryEntry``).
    init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        factoryKind: FactoryKind,
        factory: @escaping @Sendable (any Resolver) throws -> Produced
    ) {
        self.factory = factory
        super.init(key: key, token: token, configuration: configuration, factoryKind: factoryKind)
    }

    override func with(_ configuration: EntryConfiguration, token: RegistrationToken) -> ServiceEntry {
        NullaryEntry(key: key, token: token, configuration: configuration, factory: factory)
    }

    override class func filed(
        key: ServiceKey, token: RegistrationToken, configuration: EntryConfiguration, box: StoredValue
    ) -> ServiceEntry {
        let box = UncheckedSendable(box)
        return Self(key: key, token: token, configuration: configuration) { _ in box.value.load(as: Produced.self) }
    }

    /// Calls the factory of `entry`, a `NullaryEntry<Produced>`. The key names the service type exactly, so the
    /// entry found for a key of `Service` is a `NullaryEntry<Service>`: the downcast is a reinterpretation, and the
    /// factory writes its result straight into the caller's (no copy, no retain; and no metadata look-up, since
    /// the field's offset does not depend on `Produced`).
    @inline(__always)
    static func build(_ entry: ServiceEntry, _ resolver: any Resolver) throws -> Produced {
        try knownDowncast(entry, to: NullaryEntry<Produced>.self).factory(resolver)
    }

    override func validate(in container: Container) throws {
        _ = try container.resolve(Produced.self, name: key.name)
    }
}

/// The entry of a service whose factory takes runtime arguments (at least one).
///
/// The factory takes its arguments as a tuple in memory, of the key's argument types (``ServiceKey/argumentsType``):
/// a resolve passes a pointer to its arguments, and no code between the caller and the factory is generic over a
/// parameter pack (measured: every function that forwards a pack copies it into a tuple, whose metadata it looks
/// up in the runtime; that was most of a resolve with two arguments). See ``TupleFactory``.
///
/// A key names its service and argument types exactly, so the entry found for a key of `Service` with arguments is
/// an `ArgumentsEntry<Service>` whose factory reads a tuple of the key's argument types.
///
/// Not final, for ``AsyncArgumentsEntry``, as ``NullaryEntry`` is for ``AsyncNullaryEntry``.
class ArgumentsEntry<Produced>: ServiceEntry, @unchecked Sendable {
    final let factory: TupleFactory<Produced>

    init(
        key: ServiceKey,
        token: RegistrationToken,
        configuration: EntryConfiguration,
        factoryKind: FactoryKind = .synchronous,
        factory: TupleFactory<Produced>
    ) {
        self.factory = factory
        super.init(key: key, token: token, configuration: configuration, factoryKind: factoryKind)
    }

    override func with(_ configuration: EntryConfiguration, token: RegistrationToken) -> ServiceEntry {
        ArgumentsEntry(key: key, token: token, configuration: configuration, factory: factory)
    }

    /// Calls the factory of `entry`, an `ArgumentsEntry<Produced>`, with the arguments at `arguments`: a
    /// reinterpretation, like `NullaryEntry.build`.
    @inline(__always)
    static func build(_ entry: ServiceEntry, _ resolver: any Resolver, arguments: ArgumentsTuple) throws -> Produced {
        try knownDowncast(entry, to: ArgumentsEntry<Produced>.self).factory.make(resolver, arguments)
    }
}

/// A forward from another type to a registration (`implements`): resolving the forward's key resolves the
/// target registration, in the container that holds both, and casts its instance.
///
/// A forward has no scope of its own: the target's scope decides whether the instance is shared, so a permanent
/// registration forwarded to two protocols yields one instance.
class ForwardingEntry: ServiceEntry, @unchecked Sendable {
    let target: ServiceKey
    /// The container that holds the forward and its target. Unretained, in every build: a forward is used only while
    /// a resolution keeps that container alive, and a strong reference would be a cycle through its registry.
    let ownerReference: Unretained<Container>
    var owner: Container { ownerReference.object }
    /// Resolves the forward's key with its own type, for `validate()`; `nil` for a key with arguments.
    let validator: (@Sendable (Container) throws -> Void)?

    init(key: ServiceKey, target: ServiceKey, owner: Container, validator: (@Sendable (Container) throws -> Void)?) {
        self.target = target
        ownerReference = Unretained(owner, retainedInChecks: false)
        self.validator = validator
        super.init(
            key: key, token: RegistrationToken(), configuration: EntryConfiguration(scope: .transient), isForward: true)
    }

    final override var forwardTarget: ServiceKey? { target }

    final override func validate(in container: Container) throws {
        try validator?(container)
    }

    override func with(_ configuration: EntryConfiguration, token: RegistrationToken) -> ServiceEntry {
        self  // Configuring a registration configures its target; the forward follows. (`copy` is overridden.)
    }

    /// Resolves the target and returns its instance as `Service`. `arguments` points at the runtime arguments, as
    /// a tuple of the key's argument types, or is `nil` for none.
    func forward<Service>(
        as _: Service.Type,
        in resolution: Resolution,
        arguments: ArgumentsTuple?
    ) throws -> Service {
        preconditionFailure("Every forward is a ForwardEntry.")
    }

    /// `forward`, for an `async` resolution, which awaits the target. `arguments` boxes the runtime arguments.
    func forwardAsync<Service>(
        as _: Service.Type,
        in resolution: Resolution,
        arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        preconditionFailure("Every forward is a ForwardEntry.")
    }
}

/// A forward to a registration of `Target`.
final class ForwardEntry<Target>: ForwardingEntry, @unchecked Sendable {
    override func copy(for owner: Container) -> ServiceEntry {
        ForwardEntry(key: key, target: target, owner: owner, validator: validator)
    }

    override func forward<Service>(
        as _: Service.Type,
        in resolution: Resolution,
        arguments: ArgumentsTuple?
    ) throws -> Service {
        let instance = try resolution.resolveTarget(Target.self, key: target, in: owner, arguments: arguments)
        guard let service = instance as? Service else {
            throw resolution.typeMismatch(key, instance: instance, expected: Service.self)
        }
        return service
    }

    override func forwardAsync<Service>(
        as _: Service.Type,
        in resolution: Resolution,
        arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        let instance = try await resolution.resolveTargetAsync(
            Target.self, key: target, in: owner, arguments: arguments)
        guard let service = instance as? Service else {
            throw resolution.typeMismatch(key, instance: instance, expected: Service.self)
        }
        return service
    }
}

/// The identity of one `register` call. Survives reconfiguration; a new `register` call makes a new one.
///
/// A number no other registration had (``UniqueNumber``), not an object: making one allocates nothing (measured: an
/// object per registration, and its retains and releases, were a tenth of registering).
@usableFromInline
struct RegistrationToken: Hashable, Sendable {
    @usableFromInline let value: Int

    init() {
        value = UniqueNumber.next()
    }
}

/// An `onRelease` hook with its service type erased.
///
/// The storage hands it the box of the instance its own registration's factory returned, kept with the registration's
/// service type (``StoredValue``): reading it back needs no cast. (Measured: the box opened into an `Any` and cast back
/// with `as!` were 400 of the 1,190 instructions of running a request's unit of work's release hook, on the
/// Hummingbird notes server.)
struct ReleaseHook: Sendable {
    /// Runs a synchronous hook; `nil` for an `async` one.
    let run: (@Sendable (StoredValue) -> Void)?
    /// Runs an `async` hook; `nil` for a synchronous one.
    let runAsync: (@Sendable (StoredValue) async -> Void)?

    /// Whether the hook is `async`: read where the hook is, without copying its closures.
    var isAsync: Bool { run == nil }

    init<Service>(_ hook: @escaping @Sendable (Service) -> Void) {
        run = { stored in hook(stored.load(as: Service.self)) }
        runAsync = nil
    }

    init<Service>(async hook: @escaping @Sendable (Service) async -> Void) {
        run = nil
        runAsync = { stored in await hook(stored.load(as: Service.self)) }
    }
}

/// An `initCompleted` hook with its service type erased.
///
/// The resolution hands it the location of the instance its own registration's factory returned, kept with the
/// registration's service type (``ValueStack``): reading it back needs no cast (measured: `as!` from `Any` was a
/// tenth of resolving a pair wired by a hook).
struct InitHook: Sendable {
    /// Copies the `Service` at the location, then runs the hook on it.
    let run: @Sendable (any Resolver, ValueStack.Location) throws -> Void

    init<Service>(_ hook: @escaping @Sendable (any Resolver, Service) throws -> Void) {
        run = { resolver, location in
            // A copy of its own: the hook may resolve more, and the instances the location points among can move.
            try hook(resolver, location.copy(as: Service.self))
        }
    }

    /// An `async` hook. Called like any other, it copies its instance and hands back the work to await as the error
    /// ``AsyncHookRequest``: an `async` resolution awaits it, and a synchronous one reports that the service needs
    /// an `async` resolve. (So a hook is one closure, whichever kind it is: an entry keeps its first hook in a field.)
    init<Service>(async hook: @escaping @Sendable (any Resolver, Service) async throws -> Void) {
        run = { resolver, location in
            // The instance goes to the hook on the resolution's own task.
            let instance = UncheckedSendable(location.copy(as: Service.self))
            throw AsyncHookRequest(cause: .asyncHook) { try await hook(resolver, instance.value) }
        }
    }

    /// A synchronous hook isolated to the main actor. On the main actor it runs at once, like any other; elsewhere
    /// it hands back the hop to the main actor as an ``AsyncHookRequest``, which an `async` resolution awaits and a
    /// synchronous one reports as needing the main actor or `await`.
    init<Service: Sendable>(mainActor hook: @escaping @MainActor @Sendable (any Resolver, Service) throws -> Void) {
        run = { resolver, location in
            let instance = location.copy(as: Service.self)
            guard isOnMainActor() else {
                throw AsyncHookRequest(cause: .mainActorHook) {
                    try await runOnMainActor(for: resolver) { try hook(resolver, instance) }
                }
            }
            try MainActor.assumeIsolated { try hook(resolver, instance) }
        }
    }

    /// A hook of a class service: the hook borrows the instance instead of copying it (measured: the copy's retain
    /// and release were a twentieth of resolving a pair wired by a hook). The resolution keeps the instance alive
    /// until it finishes, so a reference read from the address stays valid while the hook runs, wherever the
    /// instances move meanwhile. (`Service` is a class or `AnyObject`: one reference. A protocol existential, even a
    /// class-bound one, does not satisfy `AnyObject` and takes the copying hook.)
    init<Service: AnyObject>(object hook: @escaping @Sendable (any Resolver, Service) throws -> Void) {
        run = { resolver, location in
            try location.withObject(as: Service.self) { try hook(resolver, $0) }
        }
    }
}

/// What an `async` `initCompleted` hook hands back when it is called: the work to await (see ``InitHook``).
struct AsyncHookRequest: Error {
    /// Why a synchronous resolve cannot run the hook: it is `async`, or isolated to the main actor.
    let cause: AsyncOnly.Cause
    let work: @Sendable () async throws -> Void
}
