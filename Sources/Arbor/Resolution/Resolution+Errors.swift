internal import ArborPrimitives

extension Resolution {
    /// The path to the service being built now, outermost first, followed by `last` when there is one. Made in one
    /// allocation: an observed resolve makes one for every instance it builds (measured: concatenating `[last]` to
    /// the path was a tenth of observed_graph_10).
    func path(endingWith last: ServiceKey? = nil) -> [ServiceKey] {
        let hookKeys = hookPath.keys
        let frames = self.frames
        var path: [ServiceKey] = []
        path.reserveCapacity(hookKeys.count + frames.count + 1)
        path += hookKeys
        for frame in frames { path.append(frame.key) }
        if let last { path.append(last) }
        return path
    }

    /// The error for `key`, with the path to it. Built out of line, like every error here, and handed back boxed:
    /// a resolve's frame then holds one pointer for it instead of the whole `ResolutionError`, which keeps the
    /// stack a nested resolve needs small (see `enter`).
    @inline(never)
    func error(
        _ reason: ResolutionError.Reason,
        key: ServiceKey,
        alternatives: [ServiceKey] = [],
        detail: String? = nil
    ) -> any Error {
        ResolutionError(
            reason, key: key, path: path(endingWith: key), registeredAlternatives: alternatives, detail: detail)
    }

    /// A `ResolutionError` from a nested resolve passes up unchanged, and a task cancelled while the resolution
    /// awaited a build for the factory's or hook's run (``AwaitCancelled``) is `CancellationError`; any other error
    /// becomes `.factoryFailed`.
    @inline(never)
    func failure(_ error: any Error, key: ServiceKey, path: [ServiceKey], detail: String) -> any Error {
        if error is ResolutionError { return error }
        if error is AwaitCancelled { return CancellationError() }
        // A stand-in for what only an `async` resolve can do (see `FactoryKind`).
        if let asyncOnly = error as? AsyncOnly {
            return asyncRequired(key, path: path, detail: asyncOnly.explanation)
        }
        if let request = error as? AsyncHookRequest {
            return asyncRequired(key, path: path, detail: AsyncOnly(cause: request.cause).explanation)
        }
        return ResolutionError(.factoryFailed(error), key: key, path: path, detail: detail)
    }

    /// For a synchronous resolve that runs on the main actor inside a task, and is no `async` resolution's: what to
    /// write if it is top-level code. In a `main.swift`, Swift picks the synchronous `resolve` even after `try await`
    /// (top-level code is not an `async` context for overload resolution); inside an `async` function or closure it
    /// picks the `async` one.
    func topLevelCodeHint() -> String {
        // Not in `validate()`, whose resolves are its own, made from wherever it is called.
        guard !isAsync, !isHostedByAsync, diagnostics?.validation == nil, isOnMainActor(), CurrentTask.address != nil
        else { return "" }
        return """
             In top-level code (main.swift) Swift picks the synchronous resolve even after `try await`: resolve from \
            an async function (`@main struct App { static func main() async throws { … } }`), or wrap the call, \
            `try await Task { try await container.resolve(…) }.value`.
            """
    }

    /// `.depthLimitExceeded` for `key`.
    @inline(never)
    func depthLimitError(_ key: ServiceKey) -> any Error {
        error(
            .depthLimitExceeded, key: key,
            detail: "The limit is \(maxDepth) (maxResolutionDepth of the container where the resolution "
                + "started).")
    }

    /// `.depthLimitExceeded` for `key`, refused at `depth` because the thread's stack is nearly used up.
    @inline(never)
    func stackExhaustedError(_ key: ServiceKey, depth: Int) -> any Error {
        // Resolutions suspended under this one on the thread: factories that called a container's `resolve`. Each
        // starts again at depth 0, so a factory that resolves its own service that way never reaches the limit.
        // There, the cause comes first, and alone: a larger stack would only take longer to run out.
        let detail =
            beganInsideAnother
            ? """
            A factory or hook up the stack called a container's resolve instead of the resolver it was given: \
            each such call starts a new resolution at depth 0, so a factory that resolves its own service that \
            way recurses until the stack runs out. Resolve through the resolver (a cycle then throws \
            circularDependency at once), or make the recursion end.
            """
            : """
            Depth \(depth) is within maxResolutionDepth (\(maxDepth)), but a level more would \
            overflow the thread's stack. Resolve on a thread with a larger stack (a secondary thread's stack is \
            often 512 KB or less), or make the graph shallower.
            """
        var error = ResolutionError(.depthLimitExceeded, key: key, path: path(endingWith: key), detail: detail)
        error.isStackLimit = true
        return error
    }

    /// `.containerClosed` for `key`, whose instance a closed container would keep.
    @inline(never)
    func closedError(_ key: ServiceKey) -> any Error {
        error(
            .containerClosed, key: key,
            detail: """
                The container that keeps its instance was closed before the instance was published: a closed \
                container builds nothing and hands nothing out, also to resolutions that were waiting for its build.
                """)
    }

    /// `.asyncRequired` for `key`, which a synchronous resolve on the main actor would have had to wait for, while
    /// another task builds it: with the hint for top-level code, whose `try await` calls the synchronous resolve.
    @inline(never)
    func mainActorWaitError(_ key: ServiceKey) -> any Error {
        // Not a synchronous main-actor factory's or hook's in an `async` resolve: those hand the wait over
        // (``hostingOnMainActor(_:)``). In an `async` resolve, it is a synchronous resolve in `async` code on the main
        // actor, which can await instead, as the detail says.
        return asyncRequired(key, path: path(endingWith: key), detail: CreationCoordinator.mainActorDetail)
    }

    /// The error a synchronous resolve in a task throws instead of blocking its thread until an `async` resolution's
    /// build is published (``CreationCoordinator/Waiter``); in synchronous code an `async` resolution hosts, the wait
    /// goes to that resolution instead (``awaitInstead(_:waitingFor:)``). Out of line, like the other errors of the
    /// rules: inlined into `resolveByRules`, it took each level of a nested resolve 96 bytes more stack (1,072 → 1,168
    /// bytes in a release build, where StackDepthTests allows 1,146 for 200 levels in 224 KB).
    @inline(never)
    func taskThreadWaitError(_ key: ServiceKey, waitingFor storage: InstanceStorage) -> any Error {
        if runsInHostedCode { return awaitInstead(key, waitingFor: storage) }
        return asyncRequired(key, path: path(endingWith: key), detail: CreationCoordinator.taskThreadDetail)
    }

    /// For a resolve in synchronous code an `async` resolution hosts, which would have blocked its thread waiting for
    /// the build of `storage`: records that build on the thread, for the `async` resolution to await before it runs
    /// the code again (see AwaitingInstead.swift), and returns the error that unwinds the code meanwhile.
    private func awaitInstead(_ key: ServiceKey, waitingFor storage: InstanceStorage) -> any Error {
        ThreadContext.current.awaitedBuild = storage
        return asyncRequired(key, path: path(endingWith: key), detail: CreationCoordinator.hostedWaitDetail)
    }

    /// `.asyncRequired` with `detail`, and the hint for top-level code where that is where the resolve was made.
    private func asyncRequired(_ key: ServiceKey, path: [ServiceKey], detail: String) -> ResolutionError {
        var error = ResolutionError(.asyncRequired, key: key, path: path, detail: detail)
        error.hint = topLevelCodeHint()
        return error
    }

    /// `.notRegistered` for `key`, with the registrations of its type under other names or argument types.
    @inline(never)
    func notRegisteredError(_ key: ServiceKey) -> any Error {
        let context = currentContext
        return error(
            .notRegistered, key: key, alternatives: context.registrations(of: key),
            detail: context === origin ? nil : builtInItsOwner(missing: key))
    }

    /// Why `key`, registered where the resolve started, is missing where the look-up ran (`context`, not the
    /// origin): the nearest permanent or weak service up the path is built in the container that registered it,
    /// which does not see what its descendants register — typically a per-request value a shared service asked
    /// for. `nil` otherwise.
    private func builtInItsOwner(missing key: ServiceKey) -> String? {
        guard origin.registrations(of: key).contains(key) else { return nil }
        let builtInItsOwner = frames.reversed().first(where: { $0.storage == .strong || $0.storage == .weak })
        guard let (holder, scope) = builtInItsOwner?.entry.withObject({ ($0.key, $0.scope) }) else { return nil }
        return """
            \(key) is registered where this resolve started, but \(holder) is \(scope.name): it is built in the \
            container that registered it, which does not see registrations made in its descendants. Give \(holder) a \
            scope that builds it where it is resolved (.graph, .transient or .perContainer), or register \(key) where \
            \(holder) is registered.
            """
    }

    /// `.factoryFailed` for an error a factory threw while building `key`.
    @inline(never)
    func factoryError(_ error: any Error, key: ServiceKey) -> any Error {
        failure(error, key: key, path: path(), detail: "its factory threw an error")
    }

    /// An instance a storage handed out as `Any`, as the `Service` its registration's factory made.
    ///
    /// When the `Any` holds a `Service` itself — what a storage of the registration holds — it is taken out without a
    /// dynamic cast (measured: the cast into `Service?` cost as much as a whole nested resolve). The test is the type
    /// the `Any` holds, opened, not its dynamic type: an `Any` holding `any Animal` has the dynamic type of the
    /// instance inside, and only the checked cast may take that out as a `Service`.
    @inline(__always)
    func cast<Service>(_ instance: Any, key: ServiceKey) throws -> Service {
        func projected<Contained>(_ contained: Contained) throws(NotSameType) -> Service {
            guard Contained.self == Service.self else { throw NotSameType() }
            internalInvariant(instance as? Service != nil, "the runtime does not see a \(Service.self) in the instance")
            return reinterpret(contained, as: Service.self)
        }
        do throws(NotSameType) { return try projected(instance) } catch {}
        return try castChecked(instance, key: key)
    }

    /// `cast`'s checked path, in a function of its own: a function that holds a `Service?` looks its metadata up
    /// when it begins, whether the path runs or not (measured: a third of a resolve that found an instance).
    @inline(never)
    func castChecked<Service>(_ instance: Any, key: ServiceKey) throws -> Service {
        guard let service = instance as? Service else {
            throw error(
                .typeMismatch, key: key,
                detail: "The registration produced an instance of type \(type(of: instance)), which is not of type "
                    + "\(Service.self).")
        }
        return service
    }
}

/// Says that an `Any` does not hold a value of exactly the type asked for: the checked cast decides.
struct NotSameType: Error {}
