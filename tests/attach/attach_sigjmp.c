/* A program whose signal handler, installed before any attach, leaves by siglongjmp
 * (tests/attach/run_attach.py, case sigjmp): the main thread reads requests from stdin, one
 * per line, and answers each on stdout.
 *
 *   J <n>   a 200 us interval timer runs while the thread calls deep(20, i) over and over;
 *           SIGALRM's handler calls leaf once and every third time leaves by siglongjmp
 *           back to the loop's sigsetjmp. Ends after n jumps (answer "jumped"). A signal
 *           lands inside callmon's hooks now and then: its handler abandons the hook.
 *   V       whether sigaction shows the program's own handler and flags for SIGALRM
 *           ("handler ours" / "handler other")
 *   Q       quit: exits with status 3
 *
 * Attached, the handler installed before the attach must run inside the runtime's wrapper
 * (which gives back an abandoned hook's busy count): before, every hook after the first
 * abandoned one wrote nested records until they were lost (99% of the recording) and the
 * detach waited for a thread "inside a hook" until the program ended. Built like the
 * server; noinline keeps every call a call at -O2. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NOINLINE __attribute__((noinline))
#define JUMP_NOW (hits % 3 == 0) /* every third run of the handler jumps */

#include "jump_handler.h"

static void timer(long us) {
  struct itimerval it = {{0, us}, {0, us}};
  setitimer(ITIMER_REAL, &it, NULL);
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] == 'Q') break;
    if (line[0] == 'V') {
      struct sigaction now;
      sigaction(SIGALRM, NULL, &now);
      int ours = now.sa_handler == handler && (now.sa_flags & (SA_SIGINFO | SA_RESTART)) == SA_RESTART;
      printf("handler %s\n", ours ? "ours" : "other");
      continue;
    }
    volatile long want = jumps + atol(line + 1);
    volatile long sum = 0;
    timer(200);
    sigsetjmp(jump_back, 1);
    while (jumps < want)
      for (int i = 0; i < 100 && jumps < want; i++) sum += deep(20, i);
    timer(0);
    printf("jumped\n");
  }
  return 3;
}
