/* The exit calibration (docs/runtime.md, "Overhead compensation"): work() is called a few
 * times around a sleep of argv[1] milliseconds, so the process runs at least that long. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

COUNTED int work(int x) { return x * 3 + 1; }

int main(int argc, char** argv) {
  long ms = argc > 1 ? atol(argv[1]) : 0;
  int sum = work(1);
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
  sum += work(2);
  printf("%d\n", sum);
  return 0;
}
