#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("Arbor needs pthreads on this platform.")
#endif

/// Identifies the calling thread, so that a resolution can tell whether it is being used on the thread that owns it.
struct ThreadID: Hashable, @unchecked Sendable {
    private let raw: pthread_t

    static var current: ThreadID { ThreadID(raw: pthread_self()) }

    static func == (lhs: ThreadID, rhs: ThreadID) -> Bool {
        pthread_equal(lhs.raw, rhs.raw) != 0
    }

    func hash(into hasher: inout Hasher) {
        #if canImport(Darwin)
        hasher.combine(UInt(bitPattern: raw))
        #else
        hasher.combine(raw)
        #endif
    }
}

/// Sleeps a little longer on each attempt (50 µs doubling up to about 10 ms), to let another thread finish.
func pauseBriefly(attempt: Int) {
    usleep(UInt32(min(10_000, 50 << min(attempt, 8))))
}
