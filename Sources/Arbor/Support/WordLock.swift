internal import CArborSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A lock in one machine word, for critical sections of a few instructions that never run user code.
///
/// Taking it is one atomic compare-and-swap; freeing it is a plain store, where a mutex's unlock is a second atomic
/// operation. A thread that finds it held spins for a while, then yields the processor until it is free: the holder
/// is never blocked itself, so it frees the lock soon. ThreadSanitizer understands it like any atomic: an unlock
/// happens before the next lock.
///
/// On Apple platforms it is an `os_unfair_lock`, which also lends the waiter's priority to the holder.
struct WordLock {
    #if canImport(Darwin)
    private var word = os_unfair_lock_s()
    #else
    private var word = 0
    #endif

    init() {}

    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<WordLock>) {
        #if canImport(Darwin)
        os_unfair_lock_lock(wordAddress(lock))
        #else
        if !carbor_try_lock(wordAddress(lock)) { lockContended(lock) }
        #endif
    }

    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<WordLock>) {
        #if canImport(Darwin)
        os_unfair_lock_unlock(wordAddress(lock))
        #else
        carbor_unlock(wordAddress(lock))
        #endif
    }

    #if canImport(Darwin)
    @inline(__always)
    private static func wordAddress(_ lock: UnsafeMutablePointer<WordLock>) -> UnsafeMutablePointer<os_unfair_lock_s> {
        UnsafeMutableRawPointer(lock).assumingMemoryBound(to: os_unfair_lock_s.self)
    }
    #else
    @inline(__always)
    private static func wordAddress(_ lock: UnsafeMutablePointer<WordLock>) -> UnsafeMutablePointer<Int> {
        UnsafeMutableRawPointer(lock).assumingMemoryBound(to: Int.self)
    }

    /// Waits for the lock: spins on reads (which do not take the cache line away from the holder), then yields.
    @inline(never)
    private static func lockContended(_ lock: UnsafeMutablePointer<WordLock>) {
        let word = wordAddress(lock)
        var spins = 0
        while true {
            if carbor_load_relaxed(word) == 0, carbor_try_lock(word) { return }
            if spins < 100 {
                spins += 1
                carbor_spin_pause()
            } else {
                sched_yield()
            }
        }
    }
    #endif
}
