/* The shared library linked into selection.cpp (libcmselection.so): lib_twice() calls
 * lib_inner(). */
#include "fixture.h"

COUNTED int lib_inner(int x) { return x; }

COUNTED int lib_twice(int x) { return lib_inner(x) * 2; }
