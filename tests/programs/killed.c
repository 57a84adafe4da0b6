/* Killed from outside: run() calls tick() in a loop; after 100 000 calls it prints "ready"
 * and goes on until the test sends SIGKILL (or, if none comes, gives up after 60 s). */
#include <stdio.h>
#include <time.h>

#include "fixture.h"

static volatile long sink;

COUNTED void tick(long i) { sink = sink + i; }

COUNTED void run(void) {
  time_t start = time(NULL);
  for (long i = 0;; i++) {
    tick(i);
    if (i == 100000) {
      printf("ready\n");
      fflush(stdout);
    }
    if ((i & 0xffff) == 0 && time(NULL) - start > 60) break;
  }
}

int main(void) {
  run();
  printf("not killed\n");
  return 1;
}
