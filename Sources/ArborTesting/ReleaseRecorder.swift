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

    /// One call of ``wait(for:seconds:)``: ended once, by the releases it waits for, its time limit or its task's
    /// cancellation, whichever comes first. Guarded by the recorder's lock.
    private final class Waiter: @unchecked Sendable {
        let count: Int
        var continuation: CheckedContinuation<Bool, Never>?
        var isOver = false
        init(count: Int) { self.count = count }
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
            return ready.compactMap(endLocked)
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
    /// container left open), and is not a delay. It also returns `false` at once when its task is cancelled (a test
    /// past its time limit), unless the releases are there. `seconds` of zero or less only checks;
    /// `.infinity` waits for as long as it takes.
    public func wait(for count: Int, seconds: Double = 10) async -> Bool {
        let waiter = Waiter(count: count)
        let timeout: Task<Void, Never>? =
            seconds == .infinity
            ? nil
            : Task { [weak self] in
                // Whole nanoseconds, at most about 584 years; NaN and less than zero are none.
                let nanoseconds = seconds > 0 ? UInt64(min(seconds * 1e9, Double(UInt64.max / 2))) : 0
                try? await Task.sleep(nanoseconds: nanoseconds)
                if !Task.isCancelled { self?.end(waiter, with: false) }
            }
        defer { timeout?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let outcome = lock.withLock { () -> Bool? in
                    if names.count >= count { return true }
                    if waiter.isOver { return false }  // timed out or cancelled before it got here
                    waiter.continuation = continuation
                    waiters.append(waiter)
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            end(waiter, with: false)
        }
    }

    /// Ends `waiter` with `outcome`, unless it is over already.
    private func end(_ waiter: Waiter, with outcome: Bool) {
        let continuation = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            waiters.removeAll { $0 === waiter }
            return endLocked(waiter)
        }
        continuation?.resume(returning: outcome)
    }

    /// Marks `waiter` over and hands back its continuation to resume, if it has one and was not over yet.
    private func endLocked(_ waiter: Waiter) -> CheckedContinuation<Bool, Never>? {
        guard !waiter.isOver else { return nil }
        waiter.isOver = true
        defer { waiter.continuation = nil }
        return waiter.continuation
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
