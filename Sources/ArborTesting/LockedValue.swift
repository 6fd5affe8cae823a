import Foundation

/// A value behind a lock.
package final class LockedValue<Value>: @unchecked Sendable {
    // Unchecked: `value` is reached only under `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
