internal import ArborPrimitives
internal import CArborSupport

/// Which trees of containers threads are resolving in right now: how a container knows when it may free the
/// registrations it replaced.
///
/// Threads resolve with entries they found in their ``LookupCache`` without a lock and without retaining them,
/// so an entry that leaves a container's registry (re-registered, reconfigured, removed) cannot be freed while a
/// thread that found it before the change may still use it. Each thread's cache has a flag: the root of the tree
/// its top-level resolve started in, set when the resolve begins and cleared when it ends (or `anyTree`, while a
/// factory resolves in another tree). A container that retired entries, after it changed its version, frees them
/// if no thread resolves in its tree; otherwise it keeps them (`Registry.retired`) and tries again at its next
/// change, and frees them for good when it is released.
///
/// Why that is safe: a resolve sets the flag before it reads any version, and the container changes versions
/// before it reads the flags, with a full memory barrier between the write and the read on both sides. So either
/// the container sees the flag and waits, or the resolve sees the new versions and never finds the retired entry.
/// Where the system can impose a barrier on every thread of the process (Linux `membarrier`, see
/// `CArborBarrier.h`), the container, which retires rarely, does that, and the resolve, which runs millions of
/// times a second, needs only a compiler barrier; elsewhere both use sequentially consistent atomics.
///
/// Cost: setting the flag is a plain store with the process barrier, one `xchg` on x86_64 without it (measured:
/// four of the 25 ns of resolving a held permanent instance); clearing it is a plain store; nested resolves pay
/// nothing. The flags sit on cache lines of their own, so threads do not slow each other down.
final class ResolvingThreads: @unchecked Sendable {
    static let shared = ResolvingThreads()

    /// Whether containers impose the process barrier when they read the flags, so that resolves need none when they
    /// set theirs. Decided once, before the first thread's cache exists.
    static let usesProcessBarrier = carbor_process_barrier_register() == 1

    private let lock = Lock()
    private var flags: [ObjectIdentifier: AtomicWord] = [:]

    /// Registers a thread's flag. Call when the thread's look-up cache is made.
    func add(_ flag: AtomicWord, for cache: LookupCache) {
        lock.withLock { flags[ObjectIdentifier(cache)] = flag }
    }

    /// How many threads have a flag: one per thread that resolved and still runs (a cache is the thread's).
    var count: Int { lock.withLock { flags.count } }

    /// Forgets a thread's flag. Call when the look-up cache is freed.
    func remove(for cache: LookupCache) {
        lock.withLock { _ = flags.removeValue(forKey: ObjectIdentifier(cache)) }
    }

    /// The flag of a thread that resolves in more than one tree at once.
    static let anyTree = 1

    /// Whether no thread is inside a top-level resolve in the tree under `root`. Call after the versions that hide
    /// the retired entries were changed.
    func noneResolving(in root: Int) -> Bool {
        // The heavy side of the barrier: every thread that announced itself before the versions changed is seen.
        // Should the system refuse it, a thread's announcement may be invisible: assume one resolves, which only
        // keeps the retired registrations longer.
        if Self.usesProcessBarrier, carbor_process_barrier() != 1 { return false }
        return lock.withLock {
            flags.values.allSatisfy { flag in
                let tree = flag.loadInTotalOrder()
                return tree != root && tree != Self.anyTree
            }
        }
    }
}
