// Support for Arbor that Swift cannot express portably: word-sized atomics (include/CArborAtomics.h, all
// `static inline`, and the counter of unique numbers they count with), thread-local variables, and a process-wide
// memory barrier, defined here.
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>

#include "CArborAtomics.h"
#include "CArborBarrier.h"
#include "CArborMainThread.h"
#include "CArborRuntime.h"
#include "CArborThreadLocal.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
// The commands of `membarrier(2)`, part of the kernel's ABI; spelled out so that older kernel headers, which lack
// some of them, still compile this file (the query below tells whether the running kernel has them).
enum {
    carbor_membarrier_query = 0,
    carbor_membarrier_private_expedited = 1 << 3,
    carbor_membarrier_register_private_expedited = 1 << 4,
};
#endif

// `nodebug` here and below: Valgrind 3.19 cannot read the debug information clang emits for this file (it gives up
// on the whole binary), and the Performance article's profiling recipe runs the benchmark under Valgrind.
__attribute__((nodebug)) intptr_t carbor_unique_number_counter = 2;
__attribute__((nodebug)) _Thread_local void *_Nullable carbor_pooled_resolution = 0;
__attribute__((nodebug)) _Thread_local void *_Nullable carbor_thread_context = 0;
__attribute__((nodebug)) _Thread_local uintptr_t carbor_thread_number = 0;

__attribute__((nodebug)) int carbor_process_barrier_register(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    long commands = syscall(__NR_membarrier, carbor_membarrier_query, 0, 0);
    if (commands < 0 || !(commands & carbor_membarrier_private_expedited)) return 0;
    return syscall(__NR_membarrier, carbor_membarrier_register_private_expedited, 0, 0) == 0;
#else
    return 0;
#endif
}

__attribute__((nodebug)) int carbor_process_barrier(void) {
#if defined(__linux__) && defined(__NR_membarrier)
    return syscall(__NR_membarrier, carbor_membarrier_private_expedited, 0, 0) == 0;
#else
    return 0;
#endif
}

__attribute__((nodebug)) uintptr_t carbor_stack_lowest_address(void) {
#if defined(__APPLE__)
    pthread_t self = pthread_self();
    return (uintptr_t)pthread_get_stackaddr_np(self) - pthread_get_stacksize_np(self);
#elif defined(__linux__)
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    void *address = 0;
    size_t size = 0;
    int result = pthread_attr_getstack(&attributes, &address, &size);
    pthread_attr_destroy(&attributes);
    return result == 0 ? (uintptr_t)address : 0;
#else
    return 0;
#endif
}

__attribute__((nodebug)) bool carbor_is_main_thread(void) {
#if defined(__APPLE__)
    return pthread_main_np() != 0;
#elif defined(__linux__)
    return syscall(SYS_gettid) == getpid();
#else
    return false;
#endif
}
