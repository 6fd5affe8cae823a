// A memory barrier that one thread can impose on every thread of the process, so that the others need none.
//
// Threads that resolve announce which tree of containers they resolve in, then read the containers' versions; a
// thread that retires a registration changes the versions, then reads the announcements. For one of the two to
// see the other's write, a full barrier must sit between the write and the read on both sides. Resolving happens
// millions of times a second and retiring almost never, so the resolving side uses a compiler barrier only and the
// retiring side asks the kernel to run a full barrier on every processor that runs one of the process's threads
// (Linux `membarrier`, `MEMBARRIER_CMD_PRIVATE_EXPEDITED`). Where that is not available, both sides use ordinary
// sequentially consistent atomics.

#ifndef CARBOR_BARRIER_H
#define CARBOR_BARRIER_H

#include <stdint.h>

/// Registers the process for `carbor_process_barrier`. Returns 1 if it can be used, 0 if not. Call once, before
/// any thread relies on it.
int carbor_process_barrier_register(void);

/// Runs a full memory barrier on every processor that runs a thread of this process, and returns after they did.
/// Only after `carbor_process_barrier_register` returned 1. Returns 1 if it did, 0 if the system refused: then no
/// barrier ran, and the caller must act as if another thread's write were not yet visible.
int carbor_process_barrier(void);

/// Writes `*word` with no ordering, then keeps the compiler from moving later memory accesses before the write: the
/// light side of `carbor_process_barrier`.
static inline void carbor_store_before_process_barrier(intptr_t *_Nonnull word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

#endif
