/* Instrumented code that runs before callmon's runtime constructor: a .preinit_array
 * function (before libc has even set `environ`) and the constructor of a library the
 * program links (early_start_lib.c), which the loader initialises before the preloaded
 * runtime. Both call early_work(); main() calls it too. Every call is recorded. */
#include <stdio.h>

#include "fixture.h"

COUNTED int early_work(int n) { return n + 1; }
int early_lib_value(void); /* early_start_lib.c */

static volatile int preinit_result;

COUNTED static void preinit(int argc, char** argv, char** envp) {
  (void)argc;
  (void)argv;
  (void)envp;
  preinit_result = early_work(1);
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_entry)(
    int, char**, char**) = preinit;

int main(void) {
  printf("preinit %d lib %d main %d\n", preinit_result, early_lib_value(), early_work(10));
  return 0;
}
