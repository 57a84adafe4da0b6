/* The shared library linked into selection.cpp (libcmselection.so): lib_twice() calls
 * lib_inner(). */
#include "fixture.h"

/* The empty asm keeps clang from folding the call away (noinline alone does not stop its
 * interprocedural constant propagation). */
COUNTED int lib_inner(int x) {
  __asm__ volatile("" : "+r"(x));
  return x;
}

COUNTED int lib_twice(int x) { return lib_inner(x) * 2; }
