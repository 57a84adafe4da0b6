/* A signal handler that calls instrumented code: raiser() raises SIGUSR1, so on_usr1() and
 * its callee in_handler() run inside raiser() and must nest under it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static volatile sig_atomic_t seen;

COUNTED void in_handler(int sig) { seen = seen + (sig == SIGUSR1); }

static void on_usr1(int sig) { in_handler(sig); }

COUNTED void raiser(void) { raise(SIGUSR1); }

COUNTED void after_signal(void) { seen = seen + 0; }

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  raiser();
  after_signal();
  raiser();
  printf("signals seen %d\n", (int)seen);
  return 0;
}
