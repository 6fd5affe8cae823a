internal import ArborPrimitives

// Synchronous code that an `async` resolution runs — a synchronous factory, a hook, the synchronous engine building a
// synchronous factory's graph — runs on one of the few threads Swift runs tasks on. When a resolve in that code would
// wait for a build that a suspended `async` resolution takes part in, blocking the thread could leave none for that
// resolution to go on with, and with one such resolve on each thread nothing would go on (see
// ``CreationCoordinator/Waiter``). A synchronous factory or hook isolated to the main actor runs there, which never
// waits for a build an `async` resolution takes part in (it may need the main actor). So the resolve does not wait: it
// records the build on its thread and throws, the code unwinds, and the `async` resolution that hosts it awaits the
// build, suspended, then runs the code again from the start. What the first run built into the resolution's graph, or
// claimed, the second finds again; a transient instance it built that nothing holds any longer is dropped with the
// hooks queued for it (``HookQueue/dropOrphans(since:)``). Code that catches the error changes nothing: the resolution
// runs the code again whatever it returned.

/// What hosted synchronous code hands the `async` resolution that runs it when a resolve in it gave a wait up
/// (``Resolution/awaitInstead(_:waitingFor:)``): the build to await before running the code again.
struct AwaitBuildRequest: Error {
    let storage: InstanceStorage
    /// How many hooks the resolution had queued when the code began: those queued since, by the run given up, are its
    /// to drop (``HookQueue/dropOrphans(since:)``).
    let hooksBefore: Int

    /// The request recorded on `context`'s thread, which it clears.
    static func take(from context: ThreadContext, hooksBefore: Int) -> AwaitBuildRequest {
        let storage = context.awaitedBuild!
        context.awaitedBuild = nil
        return AwaitBuildRequest(storage: storage, hooksBefore: hooksBefore)
    }
}

/// A task cancelled while its `async` resolution awaited a build for a factory's or hook's run: the error of that
/// build, or hook, is `CancellationError` (``Resolution/failure(_:key:path:detail:)``), as for the resolve's own waits.
struct AwaitCancelled: Error {}

extension Resolution {
    /// Whether this resolve runs in synchronous code that an `async` resolution hosts now
    /// (``hostingSynchronousCode(_:)``), which hands a wait it gives up to that resolution. Not the `async`
    /// resolution's own synchronous calls from an `async` factory (a helper that resolves through the resolver): no
    /// one would run those again, and they are a synchronous resolve in a task like any other. Asked only on the way
    /// to a wait.
    var runsInHostedCode: Bool { ThreadContext.current.hostedAsync != nil }

    /// Runs `hosted`, synchronous code of this `async` resolution run by ``hostingSynchronousCode(_:)``, until it
    /// runs without giving a wait up: each time it does, awaits that build first. If the task is cancelled meanwhile,
    /// throws `CancellationError` — inside a factory's or hook's run (`inRun`), as ``AwaitCancelled``, which the
    /// build's error turns back into one: the wait was the resolve's, not the code's.
    @inline(__always)
    func awaitingBuildsInstead<Result>(inRun: Bool = false, _ hosted: () throws -> Result) async throws -> Result {
        while true {
            do {
                return try hosted()
            } catch let request as AwaitBuildRequest {
                try await awaitBuild(for: request, inRun: inRun)
            }
        }
    }

    /// ``awaitingBuildsInstead(inRun:_:)`` for `body`, a synchronous main-actor factory or `initCompleted` hook of this
    /// `async` resolution: runs it on the main actor, hosted there (``hostingSynchronousCode(_:)``), and each time a
    /// resolve in it gives a wait up, awaits that build off the main actor before running it again. So the main
    /// actor never blocks for another task's build, and the factory does not throw for one either.
    func hostingOnMainActor<Result: Sendable>(
        _ body: @escaping @MainActor @Sendable () throws -> Result
    ) async throws -> Result {
        while true {
            do {
                return try await MainActor.run {
                    rebind()
                    return try hostingSynchronousCode(body)
                }
            } catch let request as AwaitBuildRequest {
                rebind()
                try await awaitBuild(for: request, inRun: true)
            }
        }
    }

    /// Awaits the build `request` names, for code to run again; throws if the task was cancelled meanwhile
    /// (``awaitingBuildsInstead(inRun:_:)`` says which error).
    private func awaitBuild(for request: AwaitBuildRequest, inRun: Bool) async throws {
        // The run given up has unwound: what it returned, and its locals, are gone.
        dropOrphanedHooks(since: request.hooksBefore)
        guard await awaitBuild(of: request.storage) else {
            if inRun { throw AwaitCancelled() }
            throw CancellationError()
        }
    }

    /// Waits, suspended, until no other resolution builds the instance of `storage`; `false` if the task was
    /// cancelled meanwhile. If the build was left to this resolution, gives the claim up again: the code that needs it
    /// claims it when it runs again.
    @inline(never)
    func awaitBuild(of storage: InstanceStorage) async -> Bool {
        let acquisition = await CreationCoordinator.shared.acquireAsync(storage, for: self)
        rebind()
        switch consume acquisition {
        case .claimed:
            abandon(storage)
        case .cancelled:
            return false
        default:
            break  // Whatever else it came to, the code meets it again when it runs again.
        }
        return true
    }
}

/// Runs `body`, a synchronous factory or `initCompleted` hook isolated to the main actor, for an `async` resolve
/// through `resolver`: on the main actor, where a resolve that would wait for another task's build hands the wait to
/// the `async` resolution instead (``Resolution/hostingOnMainActor(_:)``).
@usableFromInline
func runOnMainActor<Result: Sendable>(
    for resolver: any Resolver, _ body: @escaping @MainActor @Sendable () throws -> Result
) async throws -> Result {
    guard let resolution = resolver as? Resolution else { return try await MainActor.run(body: body) }
    return try await resolution.hostingOnMainActor(body)
}
