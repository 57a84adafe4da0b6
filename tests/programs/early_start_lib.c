/* The library of early_start.c: its constructor runs before callmon's runtime constructor
 * (the loader initialises the program's libraries before the preloaded one) and calls
 * instrumented code. Its ifunc, referenced from data, is resolved while the loader
 * relocates this library, before it relocates libcallmon.so: the resolver's hooks must
 * return without touching the runtime's unrelocated GOT and TLS (the program crashed), and
 * its calls cannot be recorded. */
#include "fixture.h"

static volatile int lib_result;

COUNTED int lib_work(int n) { return n * 3; }

__attribute__((constructor)) COUNTED static void lib_init(void) { lib_result = lib_work(2); }

/* clang's instrumented resolver calls the hooks through a PLT entry the loader has not
 * bound yet at that point (even with -z now), and crashes without callmon too: built by
 * clang, the resolver and what it calls stay uninstrumented. */
#if defined(__clang__)
#define LIB_RESOLVER NOT_INSTRUMENTED __attribute__((noinline))
#else
#define LIB_RESOLVER COUNTED
#endif

COUNTED static int lib_plus_impl(int n) { return n + 100; }
static volatile int lib_resolved;
LIB_RESOLVER static int lib_choose(void) {
  lib_resolved = 1;
  return lib_resolved;
}
__attribute__((used)) LIB_RESOLVER static int (*resolve_lib_plus(void))(int) {
  return lib_choose() ? lib_plus_impl : 0;
}
static int lib_plus(int n) __attribute__((ifunc("resolve_lib_plus")));
int (*const lib_plus_ptr)(int) = lib_plus;

int early_lib_value(void) { return lib_plus_ptr(lib_result) - 100; }
