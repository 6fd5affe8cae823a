#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("Arbor needs pthreads on this platform.")
#endif

/// The pthread calls on a mutex, each checked: a call that fails stops the program with the function's name and
/// its error code (as in swift-nio's `NIOConcurrencyHelpers`), instead of running on without the lock.
///
/// Invariant that makes the mutex safe to use: it lives in memory that never moves (a pointer the owner
/// allocated, or the elements of a `ManagedBuffer`), is initialized once by `initialize(_:)` before any other call,
/// is unlocked only by the thread that locked it, and is destroyed once, unlocked, when nothing can reach it any
/// more. Debug builds, and builds with `ARBOR_INTERNAL_CHECKS`, make it an error-checking mutex: locking it again
/// on the thread that holds it, or unlocking it on a thread that does not, fails a precondition instead of
/// deadlocking or corrupting it.
@usableFromInline
package enum PthreadMutex {
    /// The mutex itself: the one type other files name, so that only this file imports the C library.
    @usableFromInline package typealias Raw = pthread_mutex_t
    /// A condition variable, paired with a mutex (``Lock``).
    @usableFromInline typealias Condition = pthread_cond_t
    @usableFromInline
    static func initialize(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        mutex.initialize(to: pthread_mutex_t())
        #if DEBUG || ARBOR_INTERNAL_CHECKS
        var attributes = pthread_mutexattr_t()
        check(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        check(
            pthread_mutexattr_settype(&attributes, .init(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype")
        check(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
        check(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy")
        #else
        check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
        #endif
    }

    /// Destroys the mutex and deinitializes its memory; the caller frees the memory.
    @usableFromInline
    static func destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deinitialize(count: 1)
    }

    @inlinable
    @inline(__always)
    static func lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
    }

    @inlinable
    @inline(__always)
    static func unlock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
    }

    /// Initializes a condition variable in memory that never moves.
    @usableFromInline
    static func initialize(_ condition: UnsafeMutablePointer<Condition>) {
        condition.initialize(to: pthread_cond_t())
        check(pthread_cond_init(condition, nil), "pthread_cond_init")
    }

    /// Destroys a condition variable nothing waits on, and deinitializes its memory; the caller frees the memory.
    @usableFromInline
    static func destroy(_ condition: UnsafeMutablePointer<Condition>) {
        check(pthread_cond_destroy(condition), "pthread_cond_destroy")
        condition.deinitialize(count: 1)
    }

    /// Releases `mutex`, sleeps until `condition` is broadcast, and takes `mutex` again.
    @usableFromInline
    static func wait(_ condition: UnsafeMutablePointer<Condition>, _ mutex: UnsafeMutablePointer<Raw>) {
        check(pthread_cond_wait(condition, mutex), "pthread_cond_wait")
    }

    /// Wakes every thread that waits on `condition`.
    @usableFromInline
    static func broadcast(_ condition: UnsafeMutablePointer<Condition>) {
        check(pthread_cond_broadcast(condition), "pthread_cond_broadcast")
    }

    /// Stops the program unless `result`, the return code of the pthread function `function`, is 0.
    @inlinable
    @inline(__always)
    static func check(_ result: Int32, _ function: StaticString) {
        precondition(result == 0, "\(function) failed with error \(result)")
    }
}
