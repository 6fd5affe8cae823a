// The functions are all `static inline`, in include/CArborAtomics.h; a C target needs one source file.
#include "CArborAtomics.h"
