// The calling thread's resolving state, its pooled resolution and its number, in C thread-local variables.
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

extern _Thread_local uintptr_t carbor_thread_number;

/// The calling thread's number (``ThreadID``), or 0 before it has one.
static inline uintptr_t carbor_get_thread_number(void) {
    return carbor_thread_number;
}

/// Sets the calling thread's number.
static inline void carbor_set_thread_number(uintptr_t number) {
    carbor_thread_number = number;
}

/// The lowest address of the calling thread's stack (stacks grow down), or 0 if the system does not tell.
uintptr_t carbor_stack_lowest_address(void);

/// The address of the calling function's frame: how deep the thread's stack is in use.
static inline uintptr_t carbor_frame_address(void) {
    return (uintptr_t)__builtin_frame_address(0);
}

#endif
