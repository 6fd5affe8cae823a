internal import CArborSupport

/// Whether the calling thread is the process's main thread, where the main actor runs its jobs.
///
/// ```swift
/// if MainThread.isCurrent { … }   // a `@MainActor` closure may be called synchronously here
/// ```
///
/// Darwin asks `pthread_main_np`; Linux compares the thread's id with the process id. (The main actor can also run on
/// another thread that drains the main dispatch queue after `dispatchMain()`: callers that need the main actor, not
/// the main thread, check the queue too.)
package enum MainThread {
    package static var isCurrent: Bool {
        carbor_is_main_thread()
    }
}
