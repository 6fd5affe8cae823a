import Foundation

/// A value behind an `NSLock`, for state that a test's threads, tasks and event loops share: what the integrations'
/// tests record from handlers, bodies and release hooks.
///
/// ```swift
/// let events = Locked<[String]>([])
/// events.withLock { $0.append("made") }
/// ```
///
/// Not the standard library's `Mutex`: ThreadSanitizer on Linux does not see its lock (a futex), so threads that
/// take it in turn look to it like a Swift access race. A scratch program with eight threads appending to a `Mutex`'s
/// array gets the report on every run, with the right count at the end; `NSLock` is a `pthread_mutex_t`, which
/// ThreadSanitizer knows.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
