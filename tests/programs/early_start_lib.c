/* The library of early_start.c: its constructor runs before callmon's runtime constructor
 * (the loader initialises the program's libraries before the preloaded one) and calls
 * instrumented code. */
#include "fixture.h"

static volatile int lib_result;

COUNTED int lib_work(int n) { return n * 3; }

__attribute__((constructor)) COUNTED static void lib_init(void) { lib_result = lib_work(2); }

int early_lib_value(void) { return lib_result; }
