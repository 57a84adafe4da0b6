// A program built with gcc -fsanitize=address (libasan.so linked dynamically: ASan refuses
// to start unless its runtime is the first library of the process). It calls an
// instrumented function 100 times, then starts a shell that prints its LD_PRELOAD: the
// library callmon put first for this program must not reach the programs it starts.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long work(long n) {
  long s = 0;
  for (long i = 0; i < n; i++) s += i;
  return s;
}

int main(void) {
  long s = 0;
  for (int i = 0; i < 100; i++) s += work(i);
  printf("sum %ld\n", s);
  fflush(stdout);
  return system("printf 'child LD_PRELOAD=[%s]\\n' \"$LD_PRELOAD\"") == 0 ? 0 : 3;
}
