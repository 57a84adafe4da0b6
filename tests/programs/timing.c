/* Timing: sleeper() sleeps 20 ms three times under outer(); the recorded times must show
 * it (total and self time of sleeper() at least 60 ms, outer()'s own time small). */
#include <stdio.h>
#include <time.h>

#include "fixture.h"

COUNTED void sleeper(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

COUNTED void outer(void) {
  for (int i = 0; i < 3; i++) sleeper();
}

int main(void) {
  outer();
  printf("slept 3 x 20 ms\n");
  return 0;
}
