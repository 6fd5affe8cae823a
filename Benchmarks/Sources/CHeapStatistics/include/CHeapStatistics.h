#ifndef ARBOR_BENCHMARKS_HEAP_STATISTICS_H
#define ARBOR_BENCHMARKS_HEAP_STATISTICS_H

#include <stddef.h>

/// Bytes allocated with malloc and not yet freed, as the allocator counts them (0 where it can't tell).
size_t arbor_benchmarks_heap_bytes_in_use(void);

#endif
