// The calling thread's pooled resolution, in a C thread-local variable.
//
// `pthread_getspecific` is a library call on every top-level resolve; a thread-local variable is an offset from
// the thread pointer. Arbor still registers a `pthread_key_t` destructor to release the pooled resolution when
// its thread exits; this variable only makes reading it cheap.

#ifndef CARBOR_THREAD_LOCAL_H
#define CARBOR_THREAD_LOCAL_H

extern _Thread_local void *_Nullable carbor_pooled_resolution;

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

/// An address unique to the calling thread while it runs: tells threads apart without a library call.
static inline const void *_Nonnull carbor_thread_marker(void) {
    return &carbor_pooled_resolution;
}

#endif
