// Atomic loads and stores of a machine word, for the few places where Arbor reads shared state without a lock.
//
// Swift's own `Atomic` (the Synchronization module) needs macOS 15, iOS 18 and their peers; these C11 builtins
// work everywhere Arbor builds, and ThreadSanitizer understands them. The functions are `static inline`, so the
// Swift compiler inlines them: each is one instruction on x86_64 and arm64.

#ifndef CARBOR_ATOMICS_H
#define CARBOR_ATOMICS_H

#include <stdint.h>

/// Reads `*word`, with no ordering: for a value that is only a hint.
static inline intptr_t carbor_load_relaxed(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/// Reads `*word`, seeing every write made before the store-release that wrote it.
static inline intptr_t carbor_load_acquire(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Writes `*word` after every write before it: a reader that sees `value` sees them too.
static inline void carbor_store_release(intptr_t *_Nonnull word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Reads `*word` in the single total order of sequentially consistent operations.
static inline intptr_t carbor_load_seq_cst(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

/// Writes `*word` in the single total order of sequentially consistent operations: no later load of this thread
/// is ordered before it.
static inline void carbor_store_seq_cst(intptr_t *_Nonnull word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
}

/// Adds `delta` to `*word` and returns the value it had before.
static inline intptr_t carbor_fetch_add(intptr_t *_Nonnull word, intptr_t delta) {
    return __atomic_fetch_add(word, delta, __ATOMIC_RELAXED);
}

/// Takes a lock word from 0 (free) to 1 (held); false if it was held. Acquires what the last unlock released.
static inline _Bool carbor_try_lock(intptr_t *_Nonnull word) {
    intptr_t expected = 0;
    return __atomic_compare_exchange_n(word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/// Frees a lock word: a plain store that releases every write made while holding it.
static inline void carbor_unlock(intptr_t *_Nonnull word) {
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

/// Tells the processor that the thread is spinning, waiting for another.
static inline void carbor_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#endif
