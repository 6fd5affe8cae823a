#include "CHeapStatistics.h"

#if defined(__linux__)
#include <malloc.h>
#endif

#if defined(__linux__) && defined(__GLIBC__)
size_t arbor_benchmarks_heap_bytes_in_use(void) {
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    return mallinfo2().uordblks;
#else
    return (size_t)(unsigned int)mallinfo().uordblks;
#endif
}
#elif defined(__APPLE__)
#include <malloc/malloc.h>

size_t arbor_benchmarks_heap_bytes_in_use(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
}
#else
size_t arbor_benchmarks_heap_bytes_in_use(void) { return 0; }
#endif
