/* Fixture of tests/tools/run_trace.py: crashes with SIGSEGV four calls deep. The trace's
 * last lines must name the functions on the way to the crash. */
#include <stdio.h>

#include "fixture.h"

int* volatile nowhere;

COUNTED void crash_here(void) { *nowhere = 1; }

COUNTED void level3(void) { crash_here(); }

COUNTED void level2(void) { level3(); }

COUNTED void level1(void) { level2(); }

int main(void) {
  printf("start\n");
  fflush(stdout);
  level1();
  return 0;
}
