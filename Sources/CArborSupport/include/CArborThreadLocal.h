// The calling thread's resolving state and its pooled resolution, in C thread-local variables.
//
// `pthread_getspecific` is a library call on every top-level resolve; a thread-local variable is an offset from
// the thread pointer. Arbor still registers a `pthread_key_t` destructor to release the thread's state when the
// thread exits; these variables only make reading it cheap.

#ifndef CARBOR_THREAD_LOCAL_H
#define CARBOR_THREAD_LOCAL_H

#include <stdint.h>

extern _Thread_local void *_Nullable carbor_pooled_resolution;
extern _Thread_local void *_Nullable carbor_thread_context;

/// The calling thread's resolving state (a retained `ThreadContext`), or NULL.
static inline void *_Nullable carbor_get_thread_context(void) {
    return carbor_thread_context;
}

/// Sets the calling thread's resolving state.
static inline void carbor_set_thread_context(void *_Nullable context) {
    carbor_thread_context = context;
}

/// The calling thread's pooled resolution, or NULL.
static inline void *_Nullable carbor_get_pooled_resolution(void) {
    return carbor_pooled_resolution;
}

/// Sets the calling thread's pooled resolution.
static inline void carbor_set_pooled_resolution(void *_Nullable resolution) {
    carbor_pooled_resolution = resolution;
}

/// Where the calling thread's pooled resolution is stored: the reference can be checked in place.
static inline void *_Nullable *_Nonnull carbor_pooled_resolution_address(void) {
    return &carbor_pooled_resolution;
}

/// The calling thread's number, or 0 before `carbor_thread_marker` gave it one.
extern _Thread_local uintptr_t carbor_thread_number;

/// Gives the calling thread its number: the next of a process-wide counter, times two (even, never 0).
uintptr_t carbor_thread_number_assign(void);

/// A number unique to the calling thread, that no other thread ever has, also after this one exits: tells threads
/// apart without a library call. (An address of a thread-local variable did not: a thread made after another exited
/// got the same one, with the same stack and thread-local storage.) Even: odd numbers are free for identities that
/// stand for no thread.
static inline uintptr_t carbor_thread_marker(void) {
    uintptr_t number = carbor_thread_number;
    if (__builtin_expect(number != 0, 1)) return number;
    return carbor_thread_number_assign();
}

/// The lowest address of the calling thread's stack (stacks grow down), or 0 if the system does not tell.
uintptr_t carbor_stack_lowest_address(void);

/// The address of the calling function's frame: how deep the thread's stack is in use.
static inline uintptr_t carbor_frame_address(void) {
    return (uintptr_t)__builtin_frame_address(0);
}

#endif
