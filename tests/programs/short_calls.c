/* Record-time duration filter: burst() makes ten quick() calls and returns within
 * microseconds; slow() calls quick() around a 10 ms sleep. Recorded with
 * --min-duration=5000000 (5 ms) only main() and slow() remain; the quick calls inside
 * slow() are taken back too, and everything's time stays in its callers' totals. */
#include <stdio.h>
#include <time.h>

#include "fixture.h"

static volatile int kept;

COUNTED int quick(int x) { return x * 3 + 1; }

COUNTED int burst(void) {
  int sum = 0;
  for (int i = 0; i < 10; i++) sum += quick(i);
  kept = sum;
  return sum;
}

COUNTED void slow(void) {
  kept = quick(1);
  struct timespec ts = {0, 10 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
  kept = quick(2);
}

int main(void) {
  int a = burst();
  slow();
  int b = burst();
  slow();
  printf("bursts %d %d\n", a, b);
  return 0;
}
