import Arbor
import Foundation

/// Records the releases of instances, in the order their release hooks ran, so that a test can check that a
/// request's container was closed and its `onRelease` hooks ran, once each, and wait for them when they run after
/// the client has its response (a live server closes a request's container once it has written the response).
///
/// ```swift
/// let releases = ReleaseRecorder()
/// root.register(UnitOfWork.self) { _ in UnitOfWork() }
///     .inObjectScope(.perContainer)
///     .recordingReleases(in: releases, as: "unit of work")
///
/// _ = try await client.get("/notes")                        // a request that resolves a UnitOfWork
/// #expect(await releases.wait(for: 1))                       // its container was closed, its hook ran
/// #expect(releases.released == ["unit of work"])
/// ```
///
/// A recorder is `Sendable`: hooks record from whichever thread or task closes a container.
public final class ReleaseRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    private var waiters: [Waiter] = []
    private var nextWaiter = 0

    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    /// Makes an empty recorder.
    public init() {}

    /// The names recorded so far, oldest first: one for each instance whose release was recorded.
    public var released: [String] {
        lock.withLock { names }
    }

    /// How many releases were recorded under `name`.
    ///
    /// ```swift
    /// #expect(releases.count(of: "unit of work") == 2)   // two requests, two units of work ended
    /// ```
    public func count(of name: String) -> Int {
        lock.withLock { names.count { $0 == name } }
    }

    /// Records a release under `name`: what `Registration.recordingReleases(in:as:)` calls from its hook. Call it
    /// from a hook of your own to record more than the release itself.
    ///
    /// ```swift
    /// .onRelease { work in releases.record("unit of work \(work.state)") }
    /// ```
    public func record(_ name: String) {
        let ready = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            names.append(name)
            let count = names.count
            let ready = waiters.filter { $0.count <= count }
            waiters.removeAll { $0.count <= count }
            return ready.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until at least `count` releases have been recorded, and returns `true`; or returns `false` once
    /// `seconds` have passed without them.
    ///
    /// ```swift
    /// #expect(await releases.wait(for: 3))   // three requests' containers closed
    /// ```
    ///
    /// It returns as soon as the releases are recorded: `seconds` bounds a test whose releases never come (a
    /// container left open), and is not a delay.
    public func wait(for count: Int, seconds: Double = 10) async -> Bool {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        let timeout = Task { [weak self] in
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            self?.timeOut(id)
        }
        defer { timeout.cancel() }
        return await withCheckedContinuation { continuation in
            let isDone = lock.withLock { () -> Bool in
                if names.count >= count { return true }
                waiters.append(Waiter(id: id, count: count, continuation: continuation))
                return false
            }
            if isDone { continuation.resume(returning: true) }
        }
    }

    private func timeOut(_ id: Int) {
        let waiter = lock.withLock { () -> Waiter? in
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }
}

extension Registration {
    /// Records every release of this registration's instances in `recorder`, under `name` (the service's type name
    /// when `nil`). It is a synchronous release hook: with `closeAndWait()` it runs after the hooks added before it,
    /// `async` ones included; `close()` runs it with the synchronous hooks, before the `async` ones.
    ///
    /// ```swift
    /// let releases = ReleaseRecorder()
    /// test.register(Transaction.self) { _ in Transaction() }
    ///     .inObjectScope(.perContainer)
    ///     .onRelease { transaction in transaction.rollBackIfOpen() }
    ///     .recordingReleases(in: releases)                        // records "Transaction" after the rollback
    /// ```
    ///
    /// A release hook runs when its container is closed (or released) with the instance it holds: a
    /// `.perContainer` instance when its request's container closes, a `.permanent` one when the root closes.
    @discardableResult
    public func recordingReleases(in recorder: ReleaseRecorder, as name: String? = nil) -> Registration {
        let name = name ?? String(describing: Service.self)
        return onRelease { (_: Service) in recorder.record(name) }
    }
}
