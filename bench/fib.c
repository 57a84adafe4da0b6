/* The recording-overhead benchmark's workload: fib(N), every call a real call (noinline,
 * and the scripts build with -fno-inline -fno-optimize-sibling-calls). Prints the result so
 * the work cannot be optimised away. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long fib(long n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 30;
  printf("fib(%ld) = %ld\n", n, fib(n));
  return 0;
}
