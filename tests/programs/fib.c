/* Plain recursion: fib(15) makes 1973 calls of fib() in a binary tree of depth 15. */
#include <stdio.h>

#include "fixture.h"

COUNTED int fib(int n) {
  if (n < 2) return n;
  /* Two statements, not `fib(n - 1) + fib(n - 2)`: the order of the operands of + is
   * unspecified, and the tests compare the call tree's order. */
  int a = fib(n - 1);
  int b = fib(n - 2);
  return a + b;
}

int main(void) {
  printf("fib(15) = %d\n", fib(15));
  return 0;
}
