/* Killed mid-run: run() calls tick() 1000 times, then die() raises SIGKILL on the process.
 * The trace must hold the 1000 calls; main, run and die are cut. */
#include <signal.h>
#include <stdio.h>

#include "fixture.h"

static volatile int sink;

COUNTED void tick(int i) { sink = sink + i; }

COUNTED void die(void) {
  printf("dying after %d\n", sink);
  fflush(stdout);
  raise(SIGKILL);
}

COUNTED void run(void) {
  for (int i = 0; i < 1000; i++) tick(i);
  die();
}

int main(void) {
  printf("start\n");
  run();
  return 0;
}
