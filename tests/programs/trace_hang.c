/* Fixture of tests/tools/run_trace.py: hangs in hang() (killed by the test with SIGKILL
 * once it printed "hanging"). The trace must already show the calls up to hang(). */
#include <stdio.h>
#include <unistd.h>

#include "fixture.h"

COUNTED void hang(void) {
  printf("hanging\n");
  fflush(stdout);
  for (;;) pause();
}

COUNTED void wait_for_work(void) { hang(); }

int main(void) {
  wait_for_work();
  return 0;
}
