// The one entry point of the Swift runtime that Arbor calls directly.

#ifndef CARBOR_RUNTIME_H
#define CARBOR_RUNTIME_H

#include <stdbool.h>

/// Adds one to the strong reference count of the Swift object at `object` and returns `object`, unless the
/// object's deinit has begun: then it changes nothing and returns null. The object's memory must be valid (its
/// deinit may have begun, but it must not have been freed).
///
/// Exported by the Swift runtime (libswiftCore; declared in its `swift/Runtime/HeapObject.h`) on every platform,
/// with the C calling convention, as part of its stable ABI since Swift 5.0. See `Unretained.retainedIfAlive()`.
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

/// Whether `swift_tryRetain` retained `object`, under a name Swift code can call (the importer does not offer the
/// runtime's own names).
static inline bool carbor_try_retain(void *_Nonnull object) {
    return swift_tryRetain(object) != 0;
}

/// The task running on the calling thread now, or null outside any task: the identity `withUnsafeCurrentTask` hands
/// out, without its resilient wrapper (whose copies and comparisons go through value witnesses: measured, 900
/// instructions a comparison). Exported by the Swift concurrency runtime (libswift_Concurrency, `swift/Runtime/Concurrency.h`) on every
/// platform with Swift concurrency, part of its stable ABI since Swift 5.5; it takes nothing and returns a pointer, which
/// the Swift and C calling conventions pass alike.
extern void *_Nullable swift_task_getCurrent(void);

/// `swift_task_getCurrent`, under a name Swift code can call.
static inline const void *_Nullable carbor_current_task(void) {
    return swift_task_getCurrent();
}

#endif
