// Whether the calling thread is the process's main thread: the thread the main actor runs on.

#ifndef CARBOR_MAIN_THREAD_H
#define CARBOR_MAIN_THREAD_H

#include <stdbool.h>

/// Whether the calling thread is the main thread. Swift's main actor runs its jobs there, and synchronous code on
/// the main thread is on the main actor, so a `@MainActor` closure may be called synchronously exactly when this is
/// true. (Darwin: `pthread_main_np`; Linux: the main thread's id is the process id.)
bool carbor_is_main_thread(void);

#endif
