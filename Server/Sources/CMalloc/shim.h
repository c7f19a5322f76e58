// glibc's allocator settings (mallopt), which Glibc's Swift module does not bring in.
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
