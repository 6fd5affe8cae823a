// Support for Arbor that Swift cannot express portably: word-sized atomics (include/CArborAtomics.h, all
// `static inline`), a thread-local variable, and a process-wide memory barrier, defined here.
#include "CArborAtomics.h"
#include "CArborBarrier.h"
#include "CArborThreadLocal.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

// `nodebug` here and below: Valgrind 3.19 cannot read the debug information clang emits for this file (it gives up
// on the whole binary), and the Performance article's profiling recipe runs the benchmark under Valgrind.
__attribute__((nodebug)) _Thread_local void *_Nullable carbor_pooled_resolution = 0;

__attribute__((nodebug)) int carbor_process_barrier_register(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || !(commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return 0;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return 0;
#endif
}

__attribute__((nodebug)) void carbor_process_barrier(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}
