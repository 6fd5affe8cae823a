/// A non-recursive mutex, optionally paired with a condition variable.
///
/// A plain `pthread_mutex_t` in heap memory that never moves: it works on every platform Arbor builds
/// for, and ThreadSanitizer understands it.
///
/// Safe because: the mutex and the condition variable are allocated and initialized by `init` and destroyed and
/// freed only by `deinit`, so every call in between finds them initialized at a stable address; the object is
/// shared by reference, never copied. Every pthread return code is checked (see ``PthreadMutex``); the caller keeps
/// the one rule the type cannot: unlock on the thread that locked (debug builds check it), and call `wait()` and
/// `broadcast()` with the lock held.
///
/// Arbor's rule for every lock: nothing is resumed or woken to run while a lock that a cancellation handler or another
/// resolution may take is held — no continuation is resumed and no task enqueued under one. Where tasks wait, the lock
/// is a ``WaitLock``, which keeps the rule by construction.
@usableFromInline
package final class Lock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<PthreadMutex.Raw>
    @usableFromInline let condition: UnsafeMutablePointer<PthreadMutex.Condition>

    package init() {
        mutex = .allocate(capacity: 1)
        PthreadMutex.initialize(mutex)
        condition = .allocate(capacity: 1)
        PthreadMutex.initialize(condition)
    }

    deinit {
        PthreadMutex.destroy(condition)
        condition.deallocate()
        PthreadMutex.destroy(mutex)
        mutex.deallocate()
    }

    @inlinable
    package func lock() {
        PthreadMutex.lock(mutex)
    }

    @inlinable
    package func unlock() {
        PthreadMutex.unlock(mutex)
    }

    /// Runs `body` with the lock held.
    @inlinable
    @inline(__always)
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        PthreadMutex.lock(mutex)
        defer { PthreadMutex.unlock(mutex) }
        return try body()
    }

    /// Releases the lock, sleeps until `broadcast()` is called, and takes the lock again. Call with the lock held.
    package func wait() {
        PthreadMutex.wait(condition, mutex)
    }

    /// Wakes every thread in `wait()`. Call with the lock held.
    package func broadcast() {
        PthreadMutex.broadcast(condition)
    }
}
