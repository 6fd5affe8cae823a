import Arbor
import ArborTestSupport
import Foundation
import Testing

// `onRelease` hooks may be `async`. `closeAndWait()` awaits every hook, newest instance first, each once, in order
// with the synchronous ones; the synchronous `close()` runs the synchronous hooks at once and starts the `async` ones
// in a task of their own, in the same order.

private final class TResource: @unchecked Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

private final class TLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    func record(_ entry: String) { lock.withLock { entries.append(entry) } }
    var values: [String] { lock.withLock { entries } }
}

@Suite struct AsyncTeardownTests {
    /// A container with three permanent resources built in the order a, b, c; b's release hook is `async`.
    private func container(logging log: TLog) -> Container {
        let container = Container()
        for name in ["a", "b", "c"] {
            let registration = container.register(TResource.self, name: name) { _ in TResource(name) }
                .inObjectScope(.permanent)
            if name == "b" {
                registration.onRelease { resource async in
                    await Task.yield()
                    log.record("release \(resource.name) (async)")
                }
            } else {
                registration.onRelease { resource in log.record("release \(resource.name)") }
            }
        }
        return container
    }

    @Test func closeAndWaitAwaitsEveryHookNewestFirstEachOnce() async throws {
        let log = TLog()
        let app = container(logging: log)
        for name in ["a", "b", "c"] { _ = try await app.resolve(TResource.self, name: name) }
        await app.closeAndWait()
        #expect(log.values == ["release c", "release b (async)", "release a"])
        await app.closeAndWait()
        app.close()
        #expect(log.values.count == 3, "each hook ran once")
    }

    @Test func closeRunsSynchronousHooksAtOnceAndStartsTheAsyncOnes() async throws {
        let log = TLog()
        let app = container(logging: log)
        for name in ["a", "b", "c"] { _ = try await app.resolve(TResource.self, name: name) }
        synchronously { app.close() }
        #expect(log.values == ["release c", "release a"], "the synchronous hooks ran before close() returned")
        // The task runs when a cooperative thread is free: the other suites' tests may keep them busy for minutes on a
        // shared machine, so the wait has no deadline of its own; the watchdog stops a run that never gets there.
        let watchdog = Watchdog("close()'s async release hook", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        while log.values.count < 3 { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(log.values == ["release c", "release a", "release b (async)"])
    }

    @Test func aRequestsUnitOfWorkIsRolledBackBeforeCloseAndWaitReturns() async throws {
        final class UnitOfWork: @unchecked Sendable {
            var isOpen = true
            func rollBack() async {
                await Task.yield()
                isOpen = false
            }
        }
        let app = Container()
        app.register(UnitOfWork.self) { _ in UnitOfWork() }
            .inObjectScope(.perContainer)
            .onRelease { work async in await work.rollBack() }
        let request = app.makeChild()
        let work = try await request.resolve(UnitOfWork.self)
        #expect(work.isOpen)
        await request.closeAndWait()
        #expect(!work.isOpen)
        let error = try #require(await asyncResolutionError { try await request.resolve(UnitOfWork.self) })
        #expect(error.kind == .containerClosed)
    }

    /// A container closed already — by `close()`, by its parent's close, or by another `closeAndWait()` still running
    /// its hooks — is not closed again: `closeAndWait()` waits for the hooks that close let go.
    enum EarlierClose: String, CaseIterable, CustomTestStringConvertible {
        case close, parentsClose, parentsCloseAndWait, anotherCloseAndWait
        var testDescription: String { rawValue }
    }

    @Test(arguments: EarlierClose.allCases)
    func closeAndWaitOfAClosedContainerWaitsForTheHooksOfTheCloseThatClosedIt(_ earlier: EarlierClose) async throws {
        let log = TLog()
        let app = Container()
        app.register(TResource.self) { _ in TResource("work") }
            .inObjectScope(.perContainer)
            .onRelease { resource async in
                // Long enough that a call that does not wait returns first.
                try? await Task.sleep(nanoseconds: 50_000_000)
                log.record("released \(resource.name)")
            }
        let request = app.makeChild()
        _ = try await request.resolve(TResource.self)

        let first: Task<Void, Never>?
        switch earlier {
        case .close:
            first = nil
            request.close()
        case .parentsClose:
            first = nil
            app.close()
        case .parentsCloseAndWait:
            first = Task { await app.closeAndWait() }
        case .anotherCloseAndWait:
            first = Task { await request.closeAndWait() }
        }
        while !request.isClosed { await Task.yield() }  // the other task closed it
        await request.closeAndWait()
        #expect(log.values == ["released work"], "the hook had finished when closeAndWait() returned")
        await first?.value
        #expect(log.values == ["released work"], "and ran once")
    }

    /// A close on another thread that is still running a synchronous release hook: `closeAndWait()` of the container
    /// that hook's instance came from waits for it, whether that close was the container's own or its parent's,
    /// `close()` or `closeAndWait()`.
    // Serialized: a case whose close is `closeAndWait()` blocks a thread of the concurrency runtime's pool in the hook.
    @Test(.serialized, arguments: EarlierClose.allCases)
    func closeAndWaitWaitsForTheSynchronousHooksAnotherThreadsCloseIsRunning(_ other: EarlierClose) async throws {
        let log = TLog()
        let proceed = DispatchSemaphore(value: 0)
        let app = Container()
        app.register(TResource.self) { _ in TResource("work") }
            .inObjectScope(.perContainer)
            .onRelease { resource in
                log.record("releasing \(resource.name)")
                // Until the test's `closeAndWait()` has returned, or for 0.3 s: a call that waits returns only after
                // the timeout, one that does not returns first.
                _ = proceed.wait(timeout: .now() + 0.3)
                log.record("released \(resource.name)")
            }
        let request = app.makeChild()
        _ = try await request.resolve(TResource.self)

        let closed = TLog()
        switch other {
        case .close, .parentsClose:
            Thread {
                if other == .close { request.close() } else { app.close() }
                closed.record("closed")
            }.start()
        case .anotherCloseAndWait, .parentsCloseAndWait:
            Task.detached {
                if other == .anotherCloseAndWait { await request.closeAndWait() } else { await app.closeAndWait() }
                closed.record("closed")
            }
        }
        while !log.values.contains("releasing work") { await Task.yield() }  // the hook is running, elsewhere
        await request.closeAndWait()
        log.record("closeAndWait returned")
        proceed.signal()
        while closed.values.isEmpty { await Task.yield() }
        #expect(log.values == ["releasing work", "released work", "closeAndWait returned"])
        // Once the hooks have run, nothing is left to wait for: the next calls return.
        await request.closeAndWait()
        await app.closeAndWait()
        #expect(log.values.count == 3, "the hook ran once")
    }

    /// An `async` release hook that awaits `closeAndWait()` of the container being closed (or of its parent, closed by
    /// the same close) cannot wait for itself: the call returns at once, and the close goes on to the next hook.
    @Test(arguments: EarlierClose.allCases)
    func aReleaseHookAwaitingCloseAndWaitOfItsOwnCloseDoesNotWaitForItself(_ earlier: EarlierClose) async throws {
        let log = TLog()
        let app = Container()
        let request = app.makeChild()
        request.register(TResource.self, name: "first") { _ in TResource("first") }.inObjectScope(.permanent)
        request.register(TResource.self, name: "second") { _ in TResource("second") }
            .inObjectScope(.permanent)
            .onRelease { resource async in
                await request.closeAndWait()
                await app.closeAndWait()
                log.record("released \(resource.name)")
            }
        _ = try await request.resolve(TResource.self, name: "first")
        _ = try await request.resolve(TResource.self, name: "second")

        let watchdog = Watchdog("a release hook awaiting its own close", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        switch earlier {
        case .close: request.close()
        case .parentsClose: app.close()
        case .parentsCloseAndWait: await app.closeAndWait()
        case .anotherCloseAndWait: await request.closeAndWait()
        }
        await request.closeAndWait()
        await app.closeAndWait()
        #expect(log.values == ["released second"])
    }
}
