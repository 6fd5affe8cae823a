internal import ArborPrimitives

/// What one thread keeps for resolving: its look-up cache, its idle resolution, and the resolution running on it
/// now. One per thread that ever resolved, released when the thread exits: the caches in a process are bounded by
/// its threads, and nothing a user keeps (a resolver, a `Lazy`, a `Provider`) holds one.
final class ThreadContext {
    /// The thread's look-up cache, shared by the resolutions that run on it.
    let cache = LookupCache()
    /// The innermost top-level resolution running on the thread: the one a `Lazy` or `Provider` made in it joins.
    /// Unretained, in every build: a resolution sets it when it begins and restores it when it finishes.
    @exclusivity(unchecked) var active: Unretained<Resolution>?
    /// The `async` resolution whose synchronous code (a factory or hook it calls) runs on the thread now, if any: a
    /// resolution that begins meanwhile (a factory that calls a container's `resolve`) is suspended under it as if on
    /// one thread, for the ``CreationCoordinator``'s cycle checks. Set and restored around those calls.
    @exclusivity(unchecked) var hostedAsync: ThreadID?
    /// The build a resolve in that synchronous code gave up waiting for, for the `async` resolution to await before
    /// it runs the code again (``Resolution/awaitInstead(_:waitingFor:)``). Set only while such code runs.
    @exclusivity(unchecked) var awaitedBuild: InstanceStorage?
    /// An idle `async` resolution, for the next top-level `async` resolve that starts on this thread
    /// (``AsyncResolutionPool``).
    @exclusivity(unchecked) var idleAsync: Resolution?
    /// Whether observers are handling an event on the thread now: a resolve they make meanwhile is not observed
    /// (``Observation/report(_:)``).
    @exclusivity(unchecked) var isReporting = false
    /// The lowest stack address a resolution may nest at on this thread: the bottom of the thread's stack plus
    /// ``stackMargin``; 0 where the system does not tell (see ``Resolution/enter(_:key:depth:)``).
    let stackLimit = StackLimit.ofCurrentThread(margin: ThreadContext.stackMargin)

    /// How much stack a resolution leaves unused, for the factory it is about to call, the next check, and the
    /// error it throws there. A level of a resolve takes about 1 KB in a release build and 3–4 KB in a debug build
    /// (the Performance article has the figures).
    static let stackMargin: UInt = 32 * 1024

    /// The calling thread's context, made on first use; released when the thread exits.
    static var current: ThreadContext {
        if let existing = ThreadLocalSlot.context.object(as: ThreadContext.self) { return existing.object }
        let context = ThreadContext()
        ThreadLocalSlot.context.store(context)
        ThreadLocalSlot.releaseContextAtThreadExit()
        return context
    }

    /// The calling thread's context, if it has resolved before.
    static var existing: ThreadContext? {
        ThreadLocalSlot.context.object(as: ThreadContext.self)?.object
    }

    deinit {
        // The pooled resolution goes with the thread. A deinit it runs that resolves gets a context of its own.
        _ = ThreadLocalSlot.pooled.removeObject(as: Resolution.self)
    }
}

/// Keeps one idle ``Resolution`` per thread, so a top-level resolve reuses it instead of allocating one.
///
/// Measured: allocating and freeing the resolution was a third of the cost of resolving a transient service
/// without dependencies.
///
/// A factory receives its resolution as its resolver, and may keep it — strongly, `weak` or `unowned`. A resolution
/// goes back to its thread's slot only if nothing refers to it any more, in any of these ways
/// (``ReferenceCountProbe``); otherwise it leaves the pool for good, *detached* (``Resolution/detach(keptWeakly:)``):
/// it keeps resolving in the container its resolution began in, and never in another. So a resolver user code
/// kept can never turn into another resolution.
///
/// The slot is a C thread-local variable (``ThreadLocalSlot``), read without a library call; the thread's
/// ``ThreadContext`` releases the resolution when the thread exits.
enum ResolutionPool {
    /// The calling thread's idle resolution, taken out of its slot; a new one if there is none, or if it is in use
    /// (a factory called a container's `resolve`: a nested top-level resolve). `recycle` puts it back.
    static func take(for container: Container) -> Resolution {
        guard let pooled = ThreadLocalSlot.pooled.object(as: Resolution.self), pooled.withObject(\.isIdle) else {
            return Resolution(origin: container)
        }
        return ThreadLocalSlot.pooled.removeObject(as: Resolution.self)!
    }

    /// The calling thread's pooled resolution if it is idle, unretained: the thread's slot keeps it, and it stays
    /// there. Call `returnToPool` after factories ran in it.
    @inline(__always)
    static func idle() -> Unretained<Resolution>? {
        guard let pooled = ThreadLocalSlot.pooled.object(as: Resolution.self) else { return nil }
        return pooled.withObject { $0.isIdle } ? pooled : nil
    }

    /// Keeps the pooled resolution in its slot after a resolve, unless something refers to it: then it leaves the
    /// pool for good, detached. Call after the borrow from `idle()` ended.
    @inline(__always)
    static func returnToPool(_ pooled: Unretained<Resolution>) {
        // Nothing to check if no factory ran (a held instance was found).
        guard pooled.withObject({ $0.wasLentOut() }), ThreadLocalSlot.pooled.holds(pooled) else { return }
        let stronglyKept = !ThreadLocalSlot.pooledHoldsTheOnlyReference(to: pooled)
        let weaklyKept = pooled.withObject { ReferenceCountProbe.hasUnownedOrWeakReferences($0) }
        guard stronglyKept || weaklyKept else { return }
        pooled.withObject { $0.detach(keptWeakly: weaklyKept) }
        // Releases the slot's reference, after the borrow above ended: the last one may be user code's.
        _ = ThreadLocalSlot.pooled.removeObject(as: Resolution.self)
    }

    /// Detaches a finished resolution that something besides the caller refers to — strongly, `weak` or `unowned` —
    /// and says whether it did: such a resolution never goes back to a pool (``Resolution/detach(keptWeakly:)``).
    static func detachIfKept(_ resolution: inout Resolution) -> Bool {
        let stronglyKept = !isKnownUniquelyReferenced(&resolution)
        let weaklyKept = ReferenceCountProbe.hasUnownedOrWeakReferences(resolution)
        guard stronglyKept || weaklyKept else { return false }
        resolution.detach(keptWeakly: weaklyKept)
        return true
    }

    /// Keeps a finished resolution for the thread's next resolve, unless something else refers to it: then it is
    /// detached.
    static func recycle(_ resolution: inout Resolution) {
        guard !detachIfKept(&resolution) else { return }
        if resolution.thread == .current, ThreadLocalSlot.pooled.object(as: Resolution.self) == nil {
            _ = ThreadContext.current  // Releases the slot's resolution when the thread exits.
            ThreadLocalSlot.pooled.store(resolution)
        }
    }
}

/// Names one top-level resolve: a resolution object, and which of its runs. What a `Lazy` or `Provider` keeps of the
/// resolution that made it, so it can join that resolution while it runs and never another.
struct ResolutionIdentity: Equatable {
    let resolution: Int
    let serial: Int
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
        guard !ResolutionPool.detachIfKept(&resolution) else { return }
        let context = ThreadContext.current
        if context.idleAsync == nil { context.idleAsync = resolution }
    }
}
