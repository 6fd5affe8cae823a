/// A registration, as `register` returns it: chain calls on it to configure the service.
///
/// ```swift
/// container.register(Presenter.self) { _ in Presenter() }
///     .inObjectScope(.graph)
///     .initCompleted { r, presenter in presenter.view = try r.resolve(View.self) }
/// ```
///
/// Each call returns the registration, so calls chain; you can also keep the value and configure it later.
/// Configuring affects later resolves. A registration that was replaced or removed ignores further calls.
public struct Registration<Service>: Sendable {
    @usableFromInline let container: Container
    /// The key the registration is stored under.
    public let key: ServiceKey
    @usableFromInline let token: RegistrationToken

    @usableFromInline
    init(container: Container, key: ServiceKey, token: RegistrationToken) {
        self.container = container
        self.key = key
        self.token = token
    }

    /// Sets the lifetime of the instances this registration builds. See ``ObjectScope``.
    ///
    /// ```swift
    /// container.register(Database.self) { _ in Database() }.inObjectScope(.permanent)
    /// ```
    ///
    /// Changing the scope of a registration drops the instance it held.
    @inlinable
    @inline(__always)
    @discardableResult
    public func inObjectScope(_ scope: ObjectScope) -> Registration {
        // Inlinable, like `shortLived()`: otherwise a caller that is generic over `Service` would look up
        // `Registration<Service>`'s metadata on every call (measured: a sixth of a registration).
        container.setScope(scope, of: key, token: token)
        return self
    }

    /// Adds a hook that runs once the instance has been built, to finish wiring it — typically a back reference
    /// that would be a cycle if the factory asked for it.
    ///
    /// ```swift
    /// container.register(Parent.self) { r in Parent(child: try r.resolve()) }
    /// container.register(Child.self) { _ in Child() }
    ///     .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }  // `parent` is weak
    /// ```
    ///
    /// Hooks are deferred until the outermost factory of the resolution has returned, then run in the order the
    /// instances were created; several hooks of one registration run in the order added. A hook resolves through
    /// the resolver it is given and shares the resolution's graph-scoped instances. `resolve` returns only after
    /// every hook has run; if a hook throws, the resolve throws ``ResolutionError/Reason/factoryFailed(_:)``.
    ///
    /// Because hooks are deferred, an object used inside another's initialiser may not have its hook-injected
    /// properties yet. Use such properties after `resolve` returns, not in initialisers.
    @discardableResult
    public func initCompleted(_ hook: @escaping @Sendable (any Resolver, Service) throws -> Void) -> Registration {
        container.reconfigure(key, token: token, addingHook: InitHook(hook))
        return self
    }

    /// Adds a hook that runs when the container drops an instance of this registration that it holds: on
    /// ``Container/close()``, ``Container/resetObjectScope(_:)``, and when the registration is replaced, removed or
    /// given another scope. Use it to close connections, flush caches or stop timers.
    ///
    /// ```swift
    /// session.register(Database.self) { _ in Database(path: "session.db") }
    ///     .inObjectScope(.permanent)
    ///     .onRelease { database in database.close() }
    /// ```
    ///
    /// Only instances a container holds strongly are released this way: permanent and per-container ones, those of
    /// a custom scope with strong retention, and registered instances. Each instance is released once; on `close()`,
    /// instances go newest first, so an instance is released before the ones it was built from. Hooks run after the
    /// container's locks are released, on the thread that closes or resets. Dropping a container without closing
    /// it runs only the hooks of its per-container instances.
    @discardableResult
    public func onRelease(_ hook: @escaping @Sendable (Service) -> Void) -> Registration {
        container.reconfigure(key, token: token, addingReleaseHook: ReleaseHook(hook))
        return self
    }

    /// Marks the service as one that long-lived services must not keep: ``Container/validate(samples:)`` reports a
    /// permanent service whose factory or hooks resolve it, as a captive dependency.
    ///
    /// ```swift
    /// container.register(RequestContext.self) { _ in RequestContext() }
    ///     .inObjectScope(.transient)
    ///     .shortLived()   // a permanent service holding one would serve every request with the first one's context
    /// ```
    ///
    /// Weak-scoped services are short-lived already. Transient and graph-scoped services are not, unless marked:
    /// building them for a permanent service that owns them is usually what you want.
    @inlinable
    @inline(__always)
    @discardableResult
    public func shortLived() -> Registration {
        container.markShortLived(key, token: token)
        return self
    }

    /// Lets the registration also answer for another type: resolving `Other` (under `name`) resolves this
    /// registration and returns its instance as `Other`, sharing its scope.
    ///
    /// ```swift
    /// container.register(SQLiteStore.self) { _ in SQLiteStore() }
    ///     .inObjectScope(.permanent)
    ///     .implements(ReadingStore.self)
    ///     .implements(WritingStore.self)
    /// let reader = try container.resolve(ReadingStore.self)   // the one SQLiteStore
    /// let writer = try container.resolve(WritingStore.self)   // the same instance
    /// ```
    ///
    /// The forwarded key keeps this registration's argument types. `Other` is not checked when you register:
    /// if the instance is not an `Other`, resolving `Other` throws ``ResolutionError/Reason/typeMismatch`` naming
    /// both types. Removing the registration (`unregister`, `removeAll`) removes its forwards too. Like the other
    /// calls on a registration, it does nothing once the registration was replaced or removed; nor for the
    /// registration's own key, which it answers already.
    @discardableResult
    public func implements<Other>(_ type: Other.Type, name: String? = nil) -> Registration {
        let forwardKey = ServiceKey(serviceType: type, name: name, argumentsType: key.argumentsType)
        // A forward under the registration's own key would replace the registration with a forward to itself.
        guard forwardKey != key else { return self }
        var validator: (@Sendable (Container) throws -> Void)?
        if !key.hasArguments {
            validator = { container in _ = try container.resolve(Other.self, name: name) }
        }
        container.add(
            ForwardEntry<Service>(key: forwardKey, target: key, owner: container, validator: validator),
            requiring: (key, token))
        return self
    }

    /// The registration's current scope, or `nil` if it was replaced or removed.
    public var scope: ObjectScope? {
        container.scope(key, token: token)
    }
}

extension Registration where Service: AnyObject {
    /// ``initCompleted(_:)`` for a service that is a class: the same call, chosen by the compiler, which hands the
    /// hook the instance without retaining it again. Hidden from the documentation, where it would be a second
    /// `initCompleted(_:)` that reads exactly like the first.
    ///
    /// ```swift
    /// container.register(Child.self) { _ in Child() }
    ///     .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }
    /// ```
    @_documentation(visibility: internal)
    @discardableResult
    public func initCompleted(_ hook: @escaping @Sendable (any Resolver, Service) throws -> Void) -> Registration {
        container.reconfigure(key, token: token, addingHook: InitHook(object: hook))
        return self
    }
}
