// The least a container per request can do, written by hand twice: floors for what any container costs in a request,
// to set beside Arbor's (`NotesServer --calibrate dictionary_scope|array_scope`, `scripts/load.sh` with
// `CALIBRATE=1 CALIBRATION=…`; the README's "A floor, written by hand").

/// A container with nothing but look-ups by type: a child looks in its own instances, then its parents'. No lock, no
/// cycle check, no errors (a missing service stops the process), no release hooks, no close: what is left when every
/// promise Arbor makes is taken away. Classes only, read back with `unsafeDowncast`, so not even a dynamic cast.
///
/// Safe to share only as the calibration uses it: the app's scope is filled before any request and only read after,
/// and each request's child is used by the one thread that serves the request.
protocol HandWrittenScope: AnyObject, Sendable {
    init(parent: Self?)
    func register<Service: AnyObject>(
        _: Service.Type, _ lifetime: HandWrittenLifetime, make: @escaping (Self) -> Service)
    func register<Service: AnyObject>(_: Service.Type, instance: Service)
    func resolve<Service: AnyObject>(_: Service.Type) -> Service
}

/// Whether a service's instance is made on every resolve, or kept by the scope that resolved it.
enum HandWrittenLifetime {
    case transient
    /// Kept by the scope the resolve started in: for a request's child, once a request, as Arbor's graph scope gives
    /// the operation's one resolve.
    case perScope
}

/// The scope as most would write it: dictionaries keyed by `ObjectIdentifier`, plain stored properties.
final class DictionaryScope: HandWrittenScope, @unchecked Sendable {
    private let parent: DictionaryScope?
    private var registrations: [ObjectIdentifier: (lifetime: HandWrittenLifetime, make: (DictionaryScope) -> AnyObject)]
    private var instances: [ObjectIdentifier: AnyObject] = [:]

    init(parent: DictionaryScope?) {
        self.parent = parent
        registrations = [:]
    }

    func register<Service: AnyObject>(
        _: Service.Type, _ lifetime: HandWrittenLifetime, make: @escaping (DictionaryScope) -> Service
    ) {
        registrations[ObjectIdentifier(Service.self)] = (lifetime, make)
    }

    func register<Service: AnyObject>(_: Service.Type, instance: Service) {
        instances[ObjectIdentifier(Service.self)] = instance
    }

    func resolve<Service: AnyObject>(_: Service.Type) -> Service {
        let key = ObjectIdentifier(Service.self)
        var scope: DictionaryScope? = self
        while let current = scope {
            if let instance = current.instances[key] { return unsafeDowncast(instance, to: Service.self) }
            if let registration = current.registrations[key] {
                let made = registration.make(self)
                if registration.lifetime == .perScope { instances[key] = made }
                return unsafeDowncast(made, to: Service.self)
            }
            scope = current.parent
        }
        preconditionFailure("\(Service.self) is not registered")
    }
}

/// The same scope tuned: arrays searched from the start (a request's child holds three instances, the app nine
/// registrations), so no hashing; and no exclusivity checks on its stored properties.
final class ArrayScope: HandWrittenScope, @unchecked Sendable {
    private struct Registration {
        let key: ObjectIdentifier
        let lifetime: HandWrittenLifetime
        let make: (ArrayScope) -> AnyObject
    }

    private let parent: ArrayScope?
    @exclusivity(unchecked) private var registrations: [Registration] = []
    @exclusivity(unchecked) private var instances: [(key: ObjectIdentifier, instance: AnyObject)] = []

    init(parent: ArrayScope?) {
        self.parent = parent
    }

    func register<Service: AnyObject>(
        _: Service.Type, _ lifetime: HandWrittenLifetime, make: @escaping (ArrayScope) -> Service
    ) {
        registrations.append(Registration(key: ObjectIdentifier(Service.self), lifetime: lifetime, make: make))
    }

    func register<Service: AnyObject>(_: Service.Type, instance: Service) {
        instances.append((ObjectIdentifier(Service.self), instance))
    }

    func resolve<Service: AnyObject>(_: Service.Type) -> Service {
        let key = ObjectIdentifier(Service.self)
        var scope: ArrayScope? = self
        while let current = scope {
            for entry in current.instances where entry.key == key {
                return unsafeDowncast(entry.instance, to: Service.self)
            }
            for registration in current.registrations where registration.key == key {
                let made = registration.make(self)
                if registration.lifetime == .perScope { instances.append((key, made)) }
                return unsafeDowncast(made, to: Service.self)
            }
            scope = current.parent
        }
        preconditionFailure("\(Service.self) is not registered")
    }
}

/// The `request_scope` operation (`RequestScopeModel.swift`) with a hand-written scope in place of Arbor: a child of
/// the app's scope, the request's two values registered in it, the handler's graph of ten objects resolved from it,
/// the child dropped.
enum HandWrittenScopeOperation<Scope: HandWrittenScope> {
    /// The app's scope: the graph's factories, and its three app-wide services already made.
    static func makeApp() -> Scope {
        let app = Scope(parent: nil)
        app.register(AppSettings.self, instance: AppSettings())
        app.register(ConnectionPool.self, instance: ConnectionPool())
        app.register(Metrics.self, instance: Metrics())
        app.register(UnitOfWork.self, .perScope) { s in
            UnitOfWork(pool: s.resolve(ConnectionPool.self), request: s.resolve(RequestInfo.self))
        }
        app.register(NoteRepository.self, .transient) { s in
            NoteRepository(unitOfWork: s.resolve(UnitOfWork.self), settings: s.resolve(AppSettings.self))
        }
        app.register(AuditLog.self, .transient) { s in
            AuditLog(
                user: s.resolve(CurrentUser.self), metrics: s.resolve(Metrics.self),
                unitOfWork: s.resolve(UnitOfWork.self))
        }
        app.register(NoteService.self, .transient) { s in
            NoteService(
                repository: s.resolve(NoteRepository.self), audit: s.resolve(AuditLog.self),
                user: s.resolve(CurrentUser.self))
        }
        app.register(NoteHandler.self, .transient) { s in
            NoteHandler(
                service: s.resolve(NoteService.self), request: s.resolve(RequestInfo.self),
                settings: s.resolve(AppSettings.self))
        }
        return app
    }

    /// The operation, one request a call.
    static func operation(in app: Scope) -> @Sendable () throws -> NoteHandler {
        {
            let child = Scope(parent: app)
            child.register(RequestInfo.self, instance: RequestInfo(id: 1))
            child.register(CurrentUser.self, instance: CurrentUser(name: "ann"))
            return child.resolve(NoteHandler.self)
        }
    }
}
