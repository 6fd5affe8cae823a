internal import ArborPrimitives
internal import CArborSupport

// An `async` resolution: the same object and state as a synchronous one — graph, path, hooks, claims, errors — owned
// by the task that runs it instead of a thread.
//
// - It joins only from its own task (`isUsableByCurrentTask`): a resolver handed to another task, or a child task,
//   starts a new resolution, as one handed to another thread does.
// - It moves between threads at each suspension, so before it touches its thread's look-up cache or runs
//   synchronous code it binds to the thread it is on (`rebind`).
// - It announces its reads of the registries with a reader of its own, held across suspensions
//   (``Resolution/reader``), so the registrations it found stay alive while it waits.
// - A synchronous factory's graph is synchronous all the way down (its factory resolves through the synchronous
//   `resolve`), so the synchronous engine builds it, hosted by this resolution (`hostingSynchronousCode`). Only
//   `async` and main-actor factories, hooks, and waiting for an instance another resolution builds take the `async`
//   paths (Rules+Async.swift).
extension Resolution {
    // MARK: Top level

    /// Resolves a service as a new top-level `async` resolution that starts in `container`.
    static func resolveAsync<Service>(
        _ serviceType: Service.Type, name: String?, in container: Container
    ) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        return try await resolveAsync(key, box: nil, in: container) { _ in
            try container.resolve(serviceType, name: name)
        }
    }

    /// Resolves a service whose factory takes runtime arguments, as a new top-level `async` resolution.
    static func resolveAsync<Service, each Argument>(
        _ serviceType: Service.Type, name: String?, in container: Container, arguments: repeat each Argument
    ) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        guard key.hasArguments else { return try await resolveAsync(serviceType, name: name, in: container) }
        return try await resolveAsync(key, box: AsyncArgumentsBox.make(repeat each arguments), in: container) { _ in
            try container.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
    }

    /// Resolves `key`, its runtime arguments in `box`, as a new top-level `async` resolution. `synchronous` is the same
    /// resolve, synchronous: what a key without a registration takes (a `Lazy`, a `Provider`, `.notRegistered`).
    static func resolveAsync<Service>(
        _ key: ServiceKey,
        box: AsyncArgumentsBox?,
        in container: Container,
        synchronous: (any Resolver) throws -> Service
    ) async throws -> Service {
        var resolution = AsyncResolutionPool.take(for: container)
        defer { AsyncResolutionPool.recycle(&resolution) }
        return try await resolution.resolveTopLevelAsync(key, in: container, arguments: box) {
            try synchronous(container)
        }
    }

    /// One top-level `async` resolve in this idle `async` resolution. `unregistered` resolves the key when it has no
    /// registration, with the caller's runtime arguments, as a synchronous top-level resolve.
    func resolveTopLevelAsync<Service>(
        _ key: ServiceKey,
        in container: Container,
        arguments: AsyncArgumentsBox?,
        unregistered: () throws -> Service
    ) async throws -> Service {
        rebind()
        reader?.enter(container.root)
        defer { reader?.exit() }
        let lookup = try lookUpTopLevel(key, in: container)
        guard lookup.found != nil || Service.self is any AsyncDerivedService.Type else { return try unregistered() }
        if arguments == nil, let found = lookup.found, found.shape == .held {
            do throws(NotHeld) { return try found.loadHeld(as: Service.self) } catch {}
        }
        beginAsync(in: container, maxDepth: lookup.depthLimit, diagnostics: lookup.diagnostics)
        do {
            let instance: Service = try await resolveAsync(key, found: lookup.found, depth: 0, arguments: arguments)
            try await completeAsync(key)
            return instance
        } catch {
            throw await failedAsync(error)
        }
    }

    /// `begin`, for an `async` resolution: owned by the current task, and never its thread's active resolution.
    func beginAsync(in container: Container, maxDepth: Int, diagnostics: Diagnostics?) {
        if diagnostics != nil { state.value.diagnostics = diagnostics }
        state.value.origin = Unretained(container, retainedInChecks: false)
        state.value.context = state.value.origin
        state.value.maxDepth = maxDepth
        state.value.depth = -1
        state.value.phase = .active
        state.value.lentOut = true
        state.value.serial &+= 1
        state.value.ownerTask = currentTask()
    }

    /// Runs the hooks, then publishes the instances built, then finishes. If that throws, call `failedAsync`.
    func completeAsync(_ key: ServiceKey) async throws {
        if !state.value.hooks.isEmpty { try await runPendingHooksAsync() }
        if state.value.group != nil || !state.value.solo.isEmpty {
            let outcome = await CreationCoordinator.shared.finishAsync(self, failure: nil)
            rebind()
            switch outcome {
            case .published: break
            case .failed(let failure): throw groupFailure(failure, key: key)
            case .wouldDeadlock: throw error(.circularDependency, key: key, detail: CreationCoordinator.nestedDetail)
            case .wouldBlockMainActor:
                throw error(.asyncRequired, key: key, detail: CreationCoordinator.mainActorDetail)
            }
        }
        finishAsync()
    }

    /// `failed`, for an `async` resolution: its creation group fails and abandons what its members claimed.
    func failedAsync(_ error: any Error) async -> any Error {
        if state.value.group != nil || !state.value.solo.isEmpty {
            _ = await CreationCoordinator.shared.finishAsync(self, failure: error)
            rebind()
        }
        finishAsync()
        return error
    }

    /// `finish`, for an `async` resolution, which is no thread's active resolution.
    func finishAsync() {
        state.value.phase = .finishing
        if !state.value.graph.isEmpty { state.value.graph.removeAll() }
        if !state.value.hooks.isEmpty { state.value.hooks.removeAll() }
        if !state.value.building.isEmpty { state.value.building.removeAll() }
        if state.value.diagnostics != nil { state.value.diagnostics = nil }
        state.value.ownerTask = nil
        state.value.phase = .finished
    }

    // MARK: Joining

    /// Whether a resolve through this resolver, on another thread than the resolution's own, joins it: only an
    /// `async` resolution that is running, from the task that runs it. Binds it to the current thread if so.
    func isUsableByCurrentTask() -> Bool {
        guard state.value.isAsync, state.value.phase == .active else { return false }
        guard let task = currentTask(), task == state.value.ownerTask else { return false }
        rebind()
        return true
    }

    /// The task running on this thread, as an address to compare, or `nil` outside any task.
    @inline(__always)
    func currentTask() -> UnsafeRawPointer? {
        carbor_current_task()
    }

    /// Binds an `async` resolution to the thread it runs on now: its look-up cache, its context and its stack limit.
    /// Call after each suspension, before anything that uses them.
    @inline(__always)
    func rebind() {
        let current = ThreadID.current
        guard state.value.boundThread != current else { return }
        let context = ThreadContext.current
        state.value.boundThread = current
        state.value.threadContext = Unretained(context, retainedInChecks: false)
        state.value.cache = Unretained(context.cache, retainedInChecks: false)
        state.value.stackLimit = context.stackLimit
    }

    /// Runs synchronous code of this `async` resolution — a factory, a hook, the synchronous engine — on the current
    /// thread: meanwhile the thread's active resolution is this one (a `Lazy` or `Provider` made in it joins it), and
    /// a resolution that begins on the thread is suspended under it (``ThreadContext/hostedAsync``).
    @inline(__always)
    func hostingSynchronousCode<Result>(_ body: () throws -> Result) rethrows -> Result {
        try state.value.threadContext.withObject { context in
            let saved = (context.active, context.hostedAsync)
            context.active = Unretained(self, retainedInChecks: false)
            context.hostedAsync = thread
            defer { (context.active, context.hostedAsync) = saved }
            return try body()
        }
    }

    // MARK: Resolver, async

    func resolve<Service>(_ serviceType: Service.Type, name: String?) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        guard isUsableByCurrentTask() else {
            return try await originForNewResolution(key).resolve(serviceType, name: name)
        }
        let found = find(key, in: state.value.context)
        let depth = state.value.depth + 1
        guard let found, isAsyncPlain(found) else {
            return try await resolveOutOfLine(key, found: found, depth: depth)
        }
        // The plain path, written out in the resolve's own frame: each `async` function a nested resolve passes
        // through allocates a frame from the task (measured: an `async` graph of ten took 34,700 instructions through
        // the rules, 30,850 with this path in a function of its own, 28,000 here). See AsyncPlainPath.swift.
        switch try beginAsyncPlain(found, key: key, depth: depth) {
        case .inGraph(let position):
            return state.value.graph.instance(at: position, as: Service.self)
        case .build(let build):
            return try await awaitAsyncPlainBuild(self, build, as: Service.self)
        case .general:  // Only the conveniences' entry point answers it.
            return try await resolveOutOfLine(key, found: found, depth: depth)
        }
    }

    /// `resolveAsync`, for what the `async` resolve's own path does not build, in a frame of its own: inlined, the
    /// rules made that resolve's frame several times larger, and every `async` resolve allocates its frame from the
    /// task (measured: `async_graph_10` took 31,950 instructions with it inlined, 26,400 without).
    @inline(never)
    private func resolveOutOfLine<Service>(_ key: ServiceKey, found: Found?, depth: Int) async throws -> Service {
        try await resolveAsync(key, found: found, depth: depth, arguments: nil)
    }

    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        guard key.hasArguments else { return try await resolve(serviceType, name: name) }
        return try await resolveJoiningAsync(key, box: AsyncArgumentsBox.make(repeat each arguments)) { resolver in
            try resolver.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
    }

    /// An `async` resolve of `key`, its runtime arguments in `box`, through this resolver: within the resolution from
    /// its own task, else as a new one in its origin. `synchronous` is the same resolve, synchronous, for a key without
    /// a registration.
    func resolveJoiningAsync<Service>(
        _ key: ServiceKey, box: AsyncArgumentsBox, synchronous: (any Resolver) throws -> Service
    ) async throws -> Service {
        guard isUsableByCurrentTask() else {
            return try await Resolution.resolveAsync(
                key, box: box, in: originForNewResolution(key), synchronous: synchronous)
        }
        let found = find(key, in: state.value.context)
        if found == nil, !(Service.self is any AsyncDerivedService.Type) {
            return try hostingSynchronousCode { try synchronous(self) }
        }
        return try await resolveAsync(key, found: found, depth: state.value.depth + 1, arguments: box)
    }

    // MARK: Resolving within the resolution

    /// Resolves `key` from what a look-up found, at `depth`, in this `async` resolution. Inlined, like the rules.
    @inline(__always)
    func resolveAsync<Service>(
        _ key: ServiceKey, found: Found?, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        var found = found
        while true {
            guard let registered = found else {
                return try await resolveUnregisteredAsync(key, depth: depth, arguments: arguments)
            }
            if registered.isPlain, registered.factoryKind == .synchronous {
                return try resolveSynchronousGraph(key, found: registered, depth: depth, arguments: arguments)
            }
            do {
                return try await resolveByRulesAsync(key, found: registered, depth: depth, arguments: arguments)
            } catch is LookAgain {
                found = findUncached(key, in: currentContext)
            }
        }
    }

    /// A synchronous factory's graph, which is synchronous all the way down: the synchronous engine builds it.
    ///
    /// A function of its own, not inlined into the `async` resolves: written out in them, its closure made this
    /// compiler's optimizer fail its ownership check on `resolve(_:name:) async` in release builds (Swift 6.3.1),
    /// depending on what else the module held. A synchronous call costs no task frame.
    @inline(never)
    private func resolveSynchronousGraph<Service>(
        _ key: ServiceKey, found: Found, depth: Int, arguments: AsyncArgumentsBox?
    ) throws -> Service {
        try hostingSynchronousCode {
            guard let arguments else { return try resolve(key, found: found, depth: depth) }
            return try arguments.withArgumentsTuple { tuple in
                try resolvePlainOrByRules(found, key: key, depth: depth, arguments: tuple)
            }
        }
    }

    /// A plain registration with runtime arguments, by the synchronous engine.
    private func resolvePlainOrByRules<Service>(
        _ found: Found, key: ServiceKey, depth: Int, arguments: ArgumentsTuple
    ) throws -> Service {
        if takesFastPath(found) { return try resolvePlain(found, key: key, depth: depth, arguments: arguments) }
        return try resolveByRules(key, found: found, depth: depth, arguments: arguments)
    }

    /// `resolveUnregistered`, for an `async` resolution: `Optional<T>` resolves `T` asynchronously; the other derived
    /// services (`Lazy`, `Provider`) only capture what they need, synchronously.
    private func resolveUnregisteredAsync<Service>(
        _ key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        guard depth <= state.value.maxDepth else { throw depthLimitError(key) }
        if let optional = Service.self as? any AsyncDerivedService.Type {
            return try await deriveAsync(optional, key: key, depth: depth, arguments: arguments) as! Service
        }
        // A key with runtime arguments and no registration reaches here only as a forward's missing target: the
        // entry points resolve the others with their arguments.
        guard arguments == nil else { throw notRegisteredError(key) }
        return try hostingSynchronousCode { try resolve(key, found: nil, depth: depth) }
    }

    private func deriveAsync<Derived: AsyncDerivedService>(
        _: Derived.Type, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Any {
        try await Derived.deriveAsync(in: self, key: key, depth: depth, arguments: arguments)
    }

    /// Resolves `T` for `Optional<T>`, at `depth`: `nil` when `T` has no registration.
    func resolveWrappedAsync<Wrapped>(
        _: Wrapped.Type, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Wrapped? {
        let wrappedKey = ServiceKey(serviceType: Wrapped.self, name: key.name, argumentsType: key.argumentsType)
        let found = find(wrappedKey, in: state.value.context)
        do {
            let wrapped: Wrapped = try await resolveAsync(wrappedKey, found: found, depth: depth, arguments: arguments)
            return wrapped
        } catch let error as ResolutionError {
            guard case .notRegistered = error.reason, error.key == wrappedKey else { throw error }
            return nil
        }
    }
}

/// A service Arbor derives from another registration in an `async` resolution, resolving that one asynchronously:
/// `Optional<T>`.
protocol AsyncDerivedService {
    static func deriveAsync(
        in resolution: Resolution, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Self
}

extension Optional: AsyncDerivedService {
    static func deriveAsync(
        in resolution: Resolution, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Self {
        try await resolution.resolveWrappedAsync(Wrapped.self, key: key, depth: depth, arguments: arguments)
    }
}

/// Keeps one idle `async` resolution per thread, as ``ResolutionPool`` keeps a synchronous one: a top-level `async`
/// resolve takes it from the thread it starts on and gives it back to the thread it ends on.
enum AsyncResolutionPool {
    static func take(for container: Container) -> Resolution {
        let context = ThreadContext.current
        if let idle = context.idleAsync {
            context.idleAsync = nil
            return idle
        }
        return Resolution(asyncOrigin: container)
    }

    /// Keeps a finished `async` resolution for the next one on this thread, unless something else refers to it: then
    /// it is detached, like a synchronous one (``Resolution/detach(keptWeakly:)``).
    static func recycle(_ resolution: inout Resolution) {
        let stronglyKept = !isKnownUniquelyReferenced(&resolution)
        let weaklyKept = ReferenceCountProbe.hasUnownedOrWeakReferences(resolution)
        guard !stronglyKept, !weaklyKept else {
            resolution.detach(keptWeakly: weaklyKept)
            return
        }
        let context = ThreadContext.current
        if context.idleAsync == nil { context.idleAsync = resolution }
    }
}
