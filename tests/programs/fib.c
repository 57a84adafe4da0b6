/* Plain recursion: fib(15) makes 1973 calls of fib() in a binary tree of depth 15. */
#include <stdio.h>

#include "fixture.h"

/* Stored after the second call, so that no compiler turns the recursion into a loop (GCC
 * does at -O2 when no -finstrument-functions exit hook follows the call, as with -pg). */
static volatile int last;

COUNTED int fib(int n) {
  if (n < 2) return n;
  /* Two statements, not `fib(n - 1) + fib(n - 2)`: the order of the operands of + is
   * unspecified, and the tests compare the call tree's order. */
  int a = fib(n - 1);
  int b = fib(n - 2);
  last = b;
  return a + b;
}

int main(void) {
  printf("fib(15) = %d\n", fib(15));
  return 0;
}
