/* Instrumented code that runs before callmon's runtime constructor: an ifunc resolver
 * (run by the loader while it relocates the program, before libc is initialised and before
 * the static TLS is), a .preinit_array function (before libc has even set `environ`) and the
 * constructor of a library the program links (early_start_lib.c), which the loader
 * initialises before the preloaded runtime. Every call is recorded, on the main thread's
 * one thread file. */
#include <stdio.h>

#include "fixture.h"

COUNTED int early_work(int n) { return n + 1; }
int early_lib_value(void); /* early_start_lib.c */

static volatile int preinit_result;
static volatile int picked;

/* The ifunc: its resolver calls choose(). The replay names the resolver after the ifunc's
 * symbol (`twice`), which shares its address. */
COUNTED static int twice_impl(int n) { return 2 * n; }
COUNTED static int choose(void) {
  picked = 1;
  return picked;
}
__attribute__((used)) COUNTED static int (*resolve_twice(void))(int) { return choose() ? twice_impl : 0; }
int twice(int n) __attribute__((ifunc("resolve_twice")));

COUNTED static void preinit(int argc, char** argv, char** envp) {
  (void)argc;
  (void)argv;
  (void)envp;
  preinit_result = early_work(1);
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_entry)(
    int, char**, char**) = preinit;

int main(void) {
  int lib = early_lib_value();
  int own = early_work(10);
  int doubled = twice(own);
  printf("preinit %d lib %d main %d ifunc %d\n", preinit_result, lib, own, doubled);
  return 0;
}
