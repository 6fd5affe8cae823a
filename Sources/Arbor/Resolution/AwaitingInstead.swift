internal import ArborPrimitives

// Synchronous code that an `async` resolution runs — a synchronous factory, a hook, the synchronous engine building a
// synchronous factory's graph — runs on one of the few threads Swift runs tasks on. When a resolve in that code would
// wait for a build that a suspended `async` resolution takes part in, blocking the thread could leave none for that
// resolution to go on with, and with one such resolve on each thread nothing would go on (see
// ``CreationCoordinator/Waiter``). So the resolve does not wait: it records the build on its thread and throws, the
// code unwinds, and the `async` resolution that hosts it awaits the build, suspended, then runs the code again from the
// start. What the first run built into the resolution's graph, or claimed, the second finds again; anything else it
// built is dropped. Code that catches the error changes nothing: the resolution runs the code again whatever it
// returned.

/// What hosted synchronous code hands the `async` resolution that runs it when a resolve in it gave a wait up
/// (``Resolution/awaitInstead(_:waitingFor:)``): the build to await before running the code again.
struct AwaitBuildRequest: Error {
    let storage: InstanceStorage

    /// The request recorded on `context`'s thread, which it clears.
    static func take(from context: ThreadContext) -> AwaitBuildRequest {
        let storage = context.awaitedBuild!
        context.awaitedBuild = nil
        return AwaitBuildRequest(storage: storage)
    }
}

extension Resolution {
    /// Runs `hosted`, synchronous code of this `async` resolution run by ``hostingSynchronousCode(_:)``, until it
    /// runs without giving a wait up: each time it does, awaits that build first.
    @inline(__always)
    func awaitingBuildsInstead<Result>(_ hosted: () throws -> Result) async throws -> Result {
        while true {
            do {
                return try hosted()
            } catch let request as AwaitBuildRequest {
                try await awaitBuild(of: request.storage)
            }
        }
    }

    /// Waits, suspended, until no other resolution builds the instance of `storage`. If it was left to this one to
    /// build, gives the claim up again: the code that needs it claims it when it runs again.
    @inline(never)
    func awaitBuild(of storage: InstanceStorage) async throws {
        let acquisition = await CreationCoordinator.shared.acquireAsync(storage, for: self)
        rebind()
        switch consume acquisition {
        case .claimed:
            abandon(storage)
        case .cancelled:
            throw CancellationError()
        default:
            break  // Whatever else it came to, the code meets it again when it runs again.
        }
    }
}
