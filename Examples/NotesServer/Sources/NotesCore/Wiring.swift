public import Arbor
import NIOConcurrencyHelpers
import Synchronization

/// How a server gets its services.
public enum Wiring: String, CaseIterable, Sendable {
    /// Registered once in an Arbor container; each request resolves from a child of it.
    case arbor
    /// Built by hand, with the same lifetimes.
    case manual
}

/// The notes services, registered once in the app's root container; both servers use it.
///
/// | service | scope | why |
/// | --- | --- | --- |
/// | ``NoteStore``, ``WallClock``, ``IDGenerator``, ``ActivityLog`` | `.permanent` | one for the whole app |
/// | ``NoteRenderer`` | `.weak` | a cache shared while requests use it, let go when none does |
/// | ``NotesUnitOfWork`` | `.perContainer` | one per request's child container, ended when the request ends |
/// | ``NotesController`` ↔ ``NotesAuditor`` | `.graph` (the default) | a circular pair, per resolve |
/// | ``RequestUser`` | an instance | registered in each request's child by the server's middleware |
public struct NotesAssembly: Assembly {
    /// Makes the assembly.
    public init() {}

    /// Registers the services.
    public func assemble(container: Container) {
        container.register(NoteStore.self) { _ in NoteStore() }.inObjectScope(.permanent)
        container.register((any WallClock).self) { _ in SystemWallClock() }.inObjectScope(.permanent)
        container.register((any IDGenerator).self) { _ in RandomIDGenerator() }.inObjectScope(.permanent)
        container.register(ActivityLog.self) { _ in ActivityLog() }.inObjectScope(.permanent)

        container.register(NoteRenderer.self) { _ in NoteRenderer() }.inObjectScope(.weak)

        Self.registerUnitOfWork(in: container)

        // `RequestUser` is registered in each request's child, from the request's header.
        container.register(NotesController.self) { r in
            NotesController(
                work: try r.resolve(), user: try r.resolve(), clock: try r.resolve(), ids: try r.resolve(),
                auditor: try r.resolve())
        }
        // The auditor's back reference would be a cycle of initialisers: set it once both exist.
        container.register(NotesAuditor.self) { r in NotesAuditor(log: try r.resolve()) }
            .initCompleted { r, auditor in auditor.controller = try r.resolve(NotesController.self) }
    }

    /// Registers the unit of work: built by each request's container on first use, and ended when the middleware
    /// closes that container. A test registers it again in its own child, to add a hook of its own.
    @discardableResult
    public static func registerUnitOfWork(in container: Container) -> Registration<NotesUnitOfWork> {
        container.register(NotesUnitOfWork.self) { r in NotesUnitOfWork(store: try r.resolve(), log: try r.resolve()) }
            .inObjectScope(.perContainer)
            .onRelease { work in work.end() }
    }

    /// A root container with the notes services.
    public static func makeContainer() -> Container {
        Assembler([NotesAssembly()]).container
    }

    /// Registers the request's user, from its `X-User` header, in its child container: what both servers'
    /// middlewares run for every request. Throws ``NotesError/missingUser`` without the header.
    public static func registerRequestValues(userHeader: String?, in child: Container) throws(NotesError) {
        child.register(RequestUser.self, instance: try RequestUser(header: userHeader))
    }
}

/// What a calibrating server runs once a request besides its own work (`NotesServer --calibrate OPERATION`).
public enum CalibrationOperation: String, CaseIterable, Sendable {
    /// The benchmark's `request_scope` operation, with Arbor.
    case requestScope = "request_scope"
    /// The same graph made by hand, with its initialisers and no container: what the other operations' graphs cost
    /// without their containers.
    case handWired = "hand_wired"
    /// The same operation with ``DictionaryScope``, a container of dictionaries written by hand, as most would.
    case dictionaryScope = "dictionary_scope"
    /// The same operation with ``ArrayScope``, that container tuned: no hashing, no exclusivity checks.
    case arrayScope = "array_scope"
    /// Not the benchmark's: the Arbor wiring's own calls on a `GET /notes/:id`, run one after another on an app
    /// container of their own (a child, the user registered, `NotesController` and `NoteRenderer` resolved, the child
    /// closed), where the Arbor-wired server spreads them over the request. It tells what the wiring's calls cost
    /// inside a request apart from where in the request they run.
    case notesRequest = "notes_request"
}

/// The app-wide services, made once: what the Arbor wiring registers as `.permanent` (and the `.weak` renderer).
public final class ManualServices: Sendable {
    /// The notes.
    public let store: NoteStore
    /// The clock new notes are stamped with.
    public let clock: any WallClock
    /// The generator of new notes' identifiers.
    public let ids: any IDGenerator
    /// The activity log.
    public let log: ActivityLog
    private let renderer = WeakShared { NoteRenderer() }
    /// The benchmark's `request_scope` operation (or its hand-written twin, or the Arbor wiring's calls), on an app
    /// container of its own, when the server measures what that operation costs inside a request
    /// (``calibrating(_:)``); `nil` otherwise. It returns whether what it built is wired right.
    let calibration: (@Sendable () throws -> Bool)?
    private let calibrations = Atomic(0)

    /// How many times these services ran the calibration's operation: once a request when they calibrate, or 0.
    public var calibrationsRun: Int { calibrations.load(ordering: .relaxed) }

    /// Makes the services; pass your own to replace one, as a test would.
    public convenience init(
        store: NoteStore = NoteStore(),
        clock: any WallClock = SystemWallClock(),
        ids: any IDGenerator = RandomIDGenerator(),
        log: ActivityLog = ActivityLog()
    ) {
        self.init(store: store, clock: clock, ids: ids, log: log, calibration: nil)
    }

    private init(
        store: NoteStore, clock: any WallClock, ids: any IDGenerator, log: ActivityLog,
        calibration: (@Sendable () throws -> Bool)?
    ) {
        self.store = store
        self.clock = clock
        self.ids = ids
        self.log = log
        self.calibration = calibration
    }

    /// The services of a hand-wired server that also runs, at the start of every request, the operation the
    /// benchmark's `request_scope` row measures (a child container, two instances registered in it, a graph of ten
    /// objects resolved, the child closed: `Benchmarks/Sources/ArborBenchmarks/RequestScopeModel.swift`, the same
    /// file), that operation without Arbor, or the Arbor wiring's own calls in one piece (``CalibrationOperation``).
    /// `NotesServer --calibrate OPERATION` serves with them, so that `scripts/load.sh` (`CALIBRATE=1`) can measure what
    /// the operation costs inside a request on the machine at hand, beside what the Arbor wiring costs.
    ///
    /// ```swift
    /// let services = try ManualServices.calibrating(.requestScope)
    /// VaporNotesApplication.manual(app, services: services)
    /// ```
    public static func calibrating(_ operation: CalibrationOperation = .requestScope) throws -> ManualServices {
        let calibration: @Sendable () throws -> Bool =
            switch operation {
            case .requestScope: checking(RequestScopeOperation.operation(in: try RequestScopeOperation.makeApp()))
            case .handWired: checking(HandWiredRequestScope.operation())
            case .dictionaryScope:
                checking(
                    HandWrittenScopeOperation<DictionaryScope>.operation(
                        in: HandWrittenScopeOperation<DictionaryScope>.makeApp()))
            case .arrayScope:
                checking(
                    HandWrittenScopeOperation<ArrayScope>.operation(in: HandWrittenScopeOperation<ArrayScope>.makeApp())
                )
            case .notesRequest: NotesRequestOperation.operation(in: NotesAssembly.makeContainer())
            }
        return ManualServices(
            store: NoteStore(), clock: SystemWallClock(), ids: RandomIDGenerator(), log: ActivityLog(),
            calibration: calibration)
    }

    private static func checking(
        _ operation: @escaping @Sendable () throws -> NoteHandler
    ) -> @Sendable () throws -> Bool {
        { try operation().isWired }
    }

    /// Runs the calibration's operation once, if these services calibrate.
    func calibrate() {
        guard let calibration else { return }
        do {
            let isWired = try calibration()
            precondition(isWired, "the calibration's request graph is wired wrong")
            calibrations.add(1, ordering: .relaxed)
        } catch {
            preconditionFailure("the calibration's operation failed: \(error)")
        }
    }

    /// The renderer the requests share while any of them holds it.
    func sharedRenderer() -> NoteRenderer {
        renderer.get()
    }
}

/// One request's services, made by hand: the unit of work on first use, kept until the request ends. What a
/// request's child container does in the Arbor wiring.
public final class ManualRequestScope: NotesServices {
    private let services: ManualServices
    /// The user the request is made for.
    public let user: RequestUser

    private struct State {
        var work: NotesUnitOfWork?
        var isEnded = false
    }

    private let state = NIOLockedValueBox(State())

    /// Begins a request for `user`.
    public init(services: ManualServices, user: RequestUser) {
        self.services = services
        self.user = user
        services.calibrate()
    }

    /// The request's unit of work, made on first use.
    public func unitOfWork() throws -> NotesUnitOfWork {
        try state.withLockedValue { state in
            if state.isEnded { throw UnitOfWorkEnded() }
            if let work = state.work { return work }
            let work = NotesUnitOfWork(store: services.store, log: services.log)
            state.work = work
            return work
        }
    }

    /// A new controller, with its auditor, on the request's unit of work.
    public func notesController() throws -> NotesController {
        let auditor = NotesAuditor(log: services.log)
        let controller = NotesController(
            work: try unitOfWork(), user: user, clock: services.clock, ids: services.ids, auditor: auditor)
        auditor.controller = controller
        return controller
    }

    /// The shared renderer.
    public func noteRenderer() -> NoteRenderer {
        services.sharedRenderer()
    }

    /// Ends the request: ends its unit of work, if it made one. Ending twice does nothing more.
    public func end() {
        let work = state.withLockedValue { state -> NotesUnitOfWork? in
            state.isEnded = true
            defer { state.work = nil }
            return state.work
        }
        work?.end()
    }

    deinit {
        end()
    }
}

/// One instance, shared while anyone holds it, then made again: Arbor's `.weak` scope, by hand.
final class WeakShared<Object: AnyObject & Sendable>: Sendable {
    private struct Reference {
        weak var object: Object?
    }

    private let make: @Sendable () -> Object
    private let current = NIOLockedValueBox(Reference())

    init(_ make: @escaping @Sendable () -> Object) {
        self.make = make
    }

    func get() -> Object {
        current.withLockedValue { current in
            if let object = current.object { return object }
            let object = make()
            current.object = object
            return object
        }
    }
}

/// ``CalibrationOperation/notesRequest``: what the Arbor wiring does on a `GET /notes/:id`, in one piece.
enum NotesRequestOperation {
    static func operation(in root: Container) -> @Sendable () throws -> Bool {
        {
            let child = root.makeChild()
            try NotesAssembly.registerRequestValues(userHeader: "ann", in: child)
            // The calls the Arbor-wired handlers make, through the same type.
            let services = ArborNotesServices(child)
            let controller = try services.notesController()
            let renderer = try services.noteRenderer()
            child.close()
            return withExtendedLifetime(renderer) {
                controller.auditor.controller === controller && controller.user.name == "ann" && controller.work.isEnded
            }
        }
    }
}
