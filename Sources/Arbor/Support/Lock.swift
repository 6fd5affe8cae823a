#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("Arbor needs pthreads on this platform.")
#endif

/// A non-recursive mutex, optionally paired with a condition variable.
///
/// A plain `pthread_mutex_t` in heap memory that never moves: it works on every platform Arbor builds
/// for, and ThreadSanitizer understands it.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let mutexResult = pthread_mutex_init(mutex, nil)
        precondition(mutexResult == 0, "pthread_mutex_init failed: \(mutexResult)")
        let conditionResult = pthread_cond_init(condition, nil)
        precondition(conditionResult == 0, "pthread_cond_init failed: \(conditionResult)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func lock() {
        pthread_mutex_lock(mutex)
    }

    func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the lock, sleeps until `broadcast()` is called, and takes the lock again. Call with the lock held.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Wakes every thread in `wait()`. Call with the lock held.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// A value and the mutex that protects it, in one allocation.
///
/// The value is reached through pointers, so reading it under the lock costs no dynamic exclusivity check: the
/// mutex already guarantees exclusive access. (Measured: a `var` on a class, read inside `withLock`, paid
/// `swift_beginAccess` on every registry look-up.)
final class Protected<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> Protected<Value> {
        let buffer = unsafeDowncast(Self.create(minimumCapacity: 1) { _ in value }, to: Protected<Value>.self)
        buffer.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        }
        return buffer
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }

    /// Runs `body` with the lock held and the value open for change.
    @inline(__always)
    func withLock<Result: ~Copyable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    /// Takes the lock, for state that lives elsewhere but is guarded by this mutex. Pair with `unlock()`.
    @inline(__always)
    func lock() {
        withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0) }
    }

    @inline(__always)
    func unlock() {
        withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0) }
    }
}
