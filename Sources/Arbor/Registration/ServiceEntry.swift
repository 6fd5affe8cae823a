/// A registration as a container stores it.
///
/// Entries are immutable, so a resolution reads one without holding a lock. Configuring a registration
/// (`inObjectScope`, `initCompleted`) swaps in a reconfigured copy under the container's lock; the copy keeps the
/// `token`, which is how a ``Registration`` handle finds its entry again and how a graph tells registrations apart.
class ServiceEntry: @unchecked Sendable {
    let key: ServiceKey
    let token: RegistrationToken
    let scope: ObjectScope
    let hooks: [InitHook]
    /// Where permanent and weak instances live; `nil` for transient and graph scopes.
    let storage: InstanceStorage?

    init(key: ServiceKey, token: RegistrationToken, scope: ObjectScope, hooks: [InitHook], storage: InstanceStorage?) {
        self.key = key
        self.token = token
        self.scope = scope
        self.hooks = hooks
        self.storage = storage
    }

    /// A copy with another scope and hooks. Keeps the instance storage (and the instance) while the scope stays.
    func reconfigured(scope: ObjectScope, hooks: [InitHook]) -> ServiceEntry {
        fatalError("subclass responsibility")  // Only FactoryEntry is ever instantiated.
    }

    final func storage(for newScope: ObjectScope) -> InstanceStorage? {
        if newScope == scope { return storage }
        return InstanceStorage.make(for: newScope)
    }
}

/// The entry of a service built by a factory that takes runtime arguments of the types `Argument...`.
///
/// A key names its service and argument types exactly, so the entry found for a key is always the
/// `FactoryEntry<Service, repeat each Argument>` of that key's types.
final class FactoryEntry<Service, each Argument>: ServiceEntry, @unchecked Sendable {
    let factory: @Sendable (any Resolver, repeat each Argument) throws -> Service

    init(
        key: ServiceKey,
        token: RegistrationToken,
        scope: ObjectScope,
        hooks: [InitHook],
        storage: InstanceStorage?,
        factory: @escaping @Sendable (any Resolver, repeat each Argument) throws -> Service
    ) {
        self.factory = factory
        super.init(key: key, token: token, scope: scope, hooks: hooks, storage: storage)
    }

    override func reconfigured(scope newScope: ObjectScope, hooks newHooks: [InitHook]) -> ServiceEntry {
        FactoryEntry(
            key: key,
            token: token,
            scope: newScope,
            hooks: newHooks,
            storage: storage(for: newScope),
            factory: factory
        )
    }
}

/// The identity of one `register` call. Survives reconfiguration; a new `register` call makes a new one.
final class RegistrationToken: Sendable {}

/// An `initCompleted` hook with its service type erased.
struct InitHook: Sendable {
    let run: @Sendable (any Resolver, Any) throws -> Void

    init<Service>(_ hook: @escaping @Sendable (any Resolver, Service) throws -> Void) {
        run = { resolver, instance in
            // The resolution hands every hook the instance its own entry's factory returned.
            try hook(resolver, instance as! Service)
        }
    }
}
