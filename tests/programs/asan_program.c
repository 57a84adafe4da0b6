// A program built with gcc -fsanitize=address (libasan.so linked dynamically: ASan refuses
// to start unless its runtime is the first library of the process). It calls an
// instrumented function 100 times, then starts a shell that prints its LD_PRELOAD and which
// of libcallmon.so and libasan.so it has loaded: the library callmon put first for this
// program must not reach the programs it starts, callmon's runtime must, and the shell must
// see the LD_PRELOAD it has without callmon (none).
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
  return system("printf 'child LD_PRELOAD=[%s]\\n' \"$LD_PRELOAD\"; "
                "for l in libcallmon libasan; do grep -q $l /proc/$$/maps && echo child has $l; "
                "done; true") == 0 ? 0 : 3;
}
