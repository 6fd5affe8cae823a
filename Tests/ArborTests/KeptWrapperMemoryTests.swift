import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

#if canImport(Glibc)
import Glibc
#endif

private final class KWEngine: @unchecked Sendable {}

/// An object that keeps a `Provider` for later, as a view model keeps one to make fresh instances.
private final class KWViewModel: @unchecked Sendable {
    let engines: Provider<KWEngine>
    init(engines: Provider<KWEngine>) { self.engines = engines }
}

// A kept `Provider`, `Lazy` or resolver costs O(1) memory: it keeps its container and the identity of the resolution
// that made it, never a resolution's buffers or a thread's look-up cache. Look-up caches belong to threads: one per
// thread that resolved, however many wrappers are kept.
@Suite struct KeptWrapperMemoryTests {
    @Test func keptProvidersKeepNoResolutionAndNoCache() throws {
        let container = Container()
        container.register(KWEngine.self) { _ in KWEngine() }.inObjectScope(.transient)
        container.register(KWViewModel.self) { r in KWViewModel(engines: try r.resolve()) }.inObjectScope(.transient)

        // The resident set is shared with tests running in parallel: of three attempts, the smallest growth counts.
        var attempts: [(sameCache: Bool, pooledKept: Bool, bytes: Int?)] = []
        for _ in 0..<3 {
            guard let attempt = keepTenThousandProviders(from: container) else { break }
            attempts.append(attempt)
            if (attempt.bytes ?? 0) < 10_000 * 1_024 { break }
        }
        let measured = try #require(attempts.min { ($0.bytes ?? 0) < ($1.bytes ?? 0) })
        #expect(measured.pooledKept, "keeping a Provider detached the thread's pooled resolution")
        #expect(measured.sameCache, "the thread's look-up cache changed while it resolved 10,000 Providers")
        if let bytes = measured.bytes {
            // A view model, its Provider and the Provider's closure: far below 1 KB each (a kept resolution's buffers
            // alone took several KB, and its look-up cache 24 KB).
            #expect(bytes < 10_000 * 1_024, "10,000 view models keeping a Provider grew the process by \(bytes) bytes")
        }
    }

    /// On a thread of its own, resolves 10,000 view models that each keep a `Provider`, and measures.
    private func keepTenThousandProviders(
        from container: Container
    ) -> (sameCache: Bool, pooledKept: Bool, bytes: Int?)? {
        onAnotherThread { () -> (sameCache: Bool, pooledKept: Bool, bytes: Int?) in
            _ = try? container.resolve(KWEngine.self)  // the thread's cache and pooled resolution exist from here on
            let pooled = carborPooledResolutionAddress()
            let cache = ObjectIdentifier(ThreadContext.current.cache)
            let before = allocatedBytes()
            let models = (0..<10_000).compactMap { _ in try? container.resolve(KWViewModel.self) }
            let after = allocatedBytes()
            let kept = models.count == 10_000 && (try? models.last?.engines.instance) != nil
            // The thread's pooled resolution is the same object: no view model kept it, so none detached it.
            let samePooled = pooled != nil && carborPooledResolutionAddress() == pooled
            let bytes = before.flatMap { start in after.map { $0 - start } }
            withExtendedLifetime(models) {}
            return (ObjectIdentifier(ThreadContext.current.cache) == cache, samePooled && kept, bytes)
        }
    }

    @Test func lookUpCachesAreBoundedByThreadsNotByWrappers() throws {
        let container = Container()
        container.register(KWEngine.self) { _ in KWEngine() }.inObjectScope(.permanent)
        let lazies = TSLockedBox<[Lazy<KWEngine>]>([])
        let caches = TSLockedBox<[WeakRef<LookupCache>]>([])
        let threads = 8
        // Each thread resolves 500 wrappers and keeps them; the threads then exit.
        let finished = runThreads(threads) { _ in
            let made = (0..<500).compactMap { _ in try? container.resolve(Lazy<KWEngine>.self) }
            let cache = WeakRef(ThreadContext.current.cache)
            lazies.mutate { $0 += made }
            caches.mutate { $0.append(cache) }
        }
        #expect(finished)
        // Every kept Lazy still works, from this thread, and resolves the one permanent instance.
        let all = lazies.value
        #expect(all.count == threads * 500)
        let instances = Set(all.compactMap { try? $0.instance }.map(ObjectIdentifier.init))
        #expect(instances.count == 1)
        // One cache a thread, whatever the thread resolved; the threads are gone (a thread's exit runs its
        // destructors a moment after its body returns) and so are their caches, although their 4,000 wrappers live on.
        #expect(Set(caches.value.compactMap { $0.object.map(ObjectIdentifier.init) }).count <= threads)
        let deadline = Date().addingTimeInterval(5)
        var alive = Int.max
        repeat {
            alive = caches.value.filter { $0.object != nil }.count
            if alive == 0 { break }
            usleep(10_000)
        } while Date() < deadline
        #expect(alive == 0, "\(alive) of the \(threads) threads' look-up caches are alive after the threads exited")
    }
}

/// The calling thread's pooled resolution, by address (or `nil`).
private func carborPooledResolutionAddress() -> UnsafeMutableRawPointer? {
    ResolutionPool.idle()?.toOpaque()
}

/// The resident set size where it can be read and sanitizers do not distort it (see `MemoryTests`).
private func allocatedBytes() -> Int? {
    TestEnvironment.runsUnderSanitizer ? nil : residentBytes()
}

/// A value threads share, behind a lock.
private final class TSLockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
