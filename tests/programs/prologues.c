/* Prologue shapes in front of the -pg entry hooks (issue 21, class 5), built with
 * -fstack-protector-all -mstackrealign: a GCC nested function taking its static chain in
 * r10 (gcc -mfentry saves it around the hook: `push %r10; call __fentry__; pop %r10`), a
 * function realigning its stack for its caller (force_align_arg_pointer), one realigning
 * it for an over-aligned local, and an ms_abi function. Each calls leaf(), so a wrong
 * return address or a clobbered static chain shows in the output or the call tree; clang
 * has no nested functions and gets a plain inner() taking the chain as an argument. */
#include <stdio.h>

#include "fixture.h"

static volatile int sink;

COUNTED int leaf(int x) {
  sink = x;
  return x;
}

#if defined(__clang__)
COUNTED static int inner(int y, const int* base) { return leaf(y) + *base; }
COUNTED int outer(int x) {
  int base = x * 3;
  return inner(x, &base) + inner(x + 1, &base);
}
#else
COUNTED int outer(int x) {
  int base = x * 3;
  __attribute__((noinline)) int inner(int y) { return leaf(y) + base; }
  return inner(x) + inner(x + 1);
}
#endif

COUNTED __attribute__((force_align_arg_pointer)) int realigned(int x) { return leaf(x) + 1; }

COUNTED int aligned_local(int x) {
  _Alignas(64) volatile int a[4];
  a[0] = x;
  return leaf(a[0]) + (int)((unsigned long)&a[0] % 64);
}

COUNTED __attribute__((ms_abi)) int msabi(int x) { return leaf(x) + 2; }

int main(void) {
  int a = outer(1);
  int b = realigned(2);
  int c = aligned_local(3);
  int d = msabi(4);
  printf("%d %d %d %d\n", a, b, c, d);
  return 0;
}
