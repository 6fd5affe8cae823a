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
enum PthreadMutex {
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

    /// Stops the program unless `result`, the return code of the pthread function `function`, is 0.
    @inlinable
    @inline(__always)
    static func check(_ result: Int32, _ function: StaticString) {
        precondition(result == 0, "\(function) failed with error \(result)")
    }
}
