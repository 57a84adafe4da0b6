/* exit() deep in the stack: c3() calls exit(3) under c2(), c1() and main(), which never
 * return. An atexit handler calls instrumented code from inside exit(), so it nests under
 * c3(). */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

static volatile int sink;

COUNTED void leaf_ok(void) { sink = sink + 1; }

static void on_exit_hook(void) { leaf_ok(); }

COUNTED void c3(int code) {
  leaf_ok();
  printf("exiting with %d\n", code);
  exit(code);
}

COUNTED void c2(int code) { c3(code); }

COUNTED void c1(int code) {
  leaf_ok();
  c2(code);
}

int main(void) {
  atexit(on_exit_hook);
  c1(3);
  return 0;
}
