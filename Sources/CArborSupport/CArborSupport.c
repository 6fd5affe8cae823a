// Support for Arbor that Swift cannot express portably: word-sized atomics (include/CArborAtomics.h, all
// `static inline`) and a thread-local variable, defined here.
#include "CArborAtomics.h"
#include "CArborThreadLocal.h"

// `nodebug`: Valgrind 3.19 cannot read the debug information clang emits for a thread-local variable.
__attribute__((nodebug)) _Thread_local void *_Nullable carbor_pooled_resolution = 0;
