/* Asynchronous signals: a 1 ms interval timer interrupts a tight loop of instrumented calls,
 * so SIGALRM often arrives while the runtime itself is inside a hook. The handler calls
 * instrumented code and re-arms the one-shot timer until 20 alarms have come, so there are
 * exactly 20 even on a loaded machine (a periodic timer stopped by main() after the loop
 * could fire a 21st time first). How often spin() ran depends on the timing; every alarm
 * must nest, whole, inside the call it interrupted. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "fixture.h"

#define ALARMS 20

static volatile sig_atomic_t alarms;
static volatile int sink;

COUNTED void in_alarm(void) { alarms = alarms + 1; }

static const struct itimerval in_one_ms = {{0, 0}, {0, 1000}};

static void on_alarm(int sig) {
  (void)sig;
  in_alarm();
  if (alarms < ALARMS) setitimer(ITIMER_REAL, &in_one_ms, NULL);
}

COUNTED void work(int i) { sink = sink + i; }

COUNTED void spin(void) {
  work(1);
  work(2);
  work(3);
}

COUNTED void loop_until_alarms(void) {
  while (alarms < ALARMS) spin();
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  setitimer(ITIMER_REAL, &in_one_ms, NULL);
  loop_until_alarms();
  printf("alarms %d\n", (int)alarms);
  return 0;
}
