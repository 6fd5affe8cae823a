// Atomic loads and stores of a machine word, for the few places where Arbor reads shared state without a lock.
//
// Swift's own `Atomic` (the Synchronization module) needs macOS 15, iOS 18 and their peers; these C11 builtins
// work everywhere Arbor builds, and ThreadSanitizer understands them. The functions are `static inline`, so the
// Swift compiler inlines them: each is one instruction on x86_64 and arm64.

#ifndef CARBOR_ATOMICS_H
#define CARBOR_ATOMICS_H

#include <stdint.h>

/// Reads `*word`, seeing every write made before the store-release that wrote it.
static inline intptr_t carbor_load_acquire(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Writes `*word` after every write before it: a reader that sees `value` sees them too.
static inline void carbor_store_release(intptr_t *_Nonnull word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Reads `*word` atomically, with no ordering: for a word other threads change with atomic operations of their own.
static inline intptr_t carbor_load_relaxed(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
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

/// The counter behind `carbor_next_unique_number`; defined in CArborSupport.c, starting at 2.
extern intptr_t carbor_unique_number_counter;

/// A number no earlier call returned in this process, on any thread: a relaxed fetch-and-add on one global word,
/// which Swift reaches directly. (A Swift `static let` holding the counter's address costs a `swift_once` check and
/// an accessor call on every use: six a request on the Hummingbird notes server.)
static inline intptr_t carbor_next_unique_number(void) {
    return __atomic_fetch_add(&carbor_unique_number_counter, 1, __ATOMIC_RELAXED);
}

#endif
