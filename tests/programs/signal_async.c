/* Asynchronous signals: a 1 ms interval timer interrupts a tight loop of instrumented calls,
 * so SIGALRM often arrives while the runtime itself is inside a hook. The handler calls
 * instrumented code; after 20 alarms the timer stops. How often spin() ran depends on the
 * timing; every alarm must nest, whole, inside the call it interrupted. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "fixture.h"

#define ALARMS 20

static volatile sig_atomic_t alarms;
static volatile int sink;

COUNTED void in_alarm(void) { alarms = alarms + 1; }

static void on_alarm(int sig) {
  (void)sig;
  in_alarm();
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
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every_ms, NULL);
  loop_until_alarms();
  struct itimerval off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_REAL, &off, NULL);
  printf("alarms %d\n", (int)alarms);
  return 0;
}
