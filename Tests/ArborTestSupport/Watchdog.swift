import Foundation

/// Ends the test process with a message when a test stops making progress: a deadlock then fails the run loudly
/// instead of hanging it. For tests whose hang would stop every thread that could report it (Swift's cooperative
/// threads, or the main thread); a test that can wait on a thread of its own uses `runThreads` instead.
///
/// ```swift
/// let watchdog = Watchdog("cancelled waiters", seconds: Watchdog.patience)
/// defer { watchdog.disarm() }
/// for round in 0..<1_000 {
///     …
///     watchdog.progress()   // each round has the whole time again
/// }
/// ```
package final class Watchdog: @unchecked Sendable {
    /// How long a test that needs Swift's cooperative threads may make no progress before it counts as hung: the
    /// suites run side by side, and a long synchronous test occupies one of those threads (on a 2-core machine, one of
    /// two) for as long as it runs, so an `async` test may wait minutes for a thread without anything being wrong.
    package static let patience: Double = runsUnderSanitizer ? 900 : 300

    private let lock = NSLock()
    private var deadline: DispatchTime
    private var isDisarmed = false

    /// Starts watching: unless `progress()` or `disarm()` is called within `seconds`, the process stops, naming
    /// `what`.
    package init(_ what: String, seconds: Double) {
        deadline = .now() + seconds
        self.seconds = seconds
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 0.05)
                let (disarmed, deadline) = lock.withLock { (isDisarmed, self.deadline) }
                if disarmed { return }
                guard DispatchTime.now() > deadline else { continue }
                let message = "Watchdog: \(what) made no progress for \(seconds) s: a deadlock. Stopping the run.\n"
                FileHandle.standardError.write(Data(message.utf8))
                fatalError(message)
            }
        }
        thread.start()
    }

    private let seconds: Double

    /// Gives the test `seconds` again from now.
    package func progress() {
        lock.withLock { deadline = .now() + seconds }
    }

    /// Stops watching.
    package func disarm() {
        lock.withLock { isDisarmed = true }
    }
}
