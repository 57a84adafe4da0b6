/* Stress: a signal storm. A 100 us interval timer (ITIMER_REAL) for about 2 s; the SIGALRM
 * handler calls on_tick() -> tick_work(). The main thread meanwhile calls spin() (3 work()
 * calls each) a fixed number of times per round until 2 s have passed, so the handler often
 * lands inside a hook. The program prints how many rounds it ran and how many ticks it
 * handled: the recording must count exactly those. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "fixture.h"

#define SPINS_PER_ROUND 1000

static volatile sig_atomic_t ticks;
static volatile long sink;

COUNTED void tick_work(void) { sink = sink + 1; }
COUNTED void on_tick(void) {
  tick_work();
  ticks = ticks + 1;
}

COUNTED void handler(int sig) {
  (void)sig;
  on_tick();
}

COUNTED void work(long i) { sink = sink + i; }
COUNTED void spin(long i) {
  work(i);
  work(i + 1);
  work(i + 2);
}

COUNTED void one_round(void) {
  for (long i = 0; i < SPINS_PER_ROUND; ++i) spin(i);
}

COUNTED double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval every = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &every, NULL);
  double start = now();
  long rounds = 0;
  while (now() - start < 2.0) {
    one_round();
    ++rounds;
  }
  struct itimerval off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_REAL, &off, NULL);
  printf("rounds %ld ticks %ld\n", rounds, (long)ticks);
  return 0;
}
