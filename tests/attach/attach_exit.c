/* A signal handler, installed before the attach, that calls exit() while its signal
 * interrupted one of callmon's hooks (tests/attach/run_attach.py, case exit). The
 * interruption is forced: the test starts the program with TEST_CALLMON_HOOK_SIGNAL=SIGURG
 * (runtime/core/test_signal.hpp), read by the runtime when the attach loads it, so the
 * first chunk switch inside a hook delivers SIGURG there. The handler calls exit(3); the
 * atexit handler then makes 100 000 calls of tail (each two of tleaf) and a static
 * destructor 20 000 of fleaf. Attached, exit must be the runtime's interposer (which gives
 * back the interrupted hook's busy count): otherwise those calls are nested records, lost
 * past the chunk's margin.
 *
 * Prints "ready" at the start; at the end, on stderr, its own counts (`name calls` lines,
 * `self 1` if it had to raise the signal itself after 30 s: no hook delivered it) and "ok"
 * on stdout; exit status 3. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#include "../programs/exit_counts.h"
#include "../programs/hook_signal.h"

static volatile long hits, leaves, self_raised;

NOINLINE long leaf(long x) {
  leaves++;
  return x * 3 + 1;
}
NOINLINE long work(long x) { return leaf(x) + leaf(x + 1); }

__attribute__((destructor)) static void fini(void) {
  for (int i = 0; i < kFini; i++) sink += fleaf(i);
  char buf[256];
  int n = snprintf(buf, sizeof buf, "self %ld\nhandler %ld\ntail %ld\ntleaf %ld\nfleaf %ld\n",
                   self_raised, hits, tails, tleaves, fleaves);
  if (write(2, buf, (size_t)n) < 0) _exit(9);
  if (write(1, "ok\n", 3) < 0) _exit(9);
}

NOINLINE void handler(int sig) {
  (void)sig;
  hits++;
  exit(3);
}

int main(void) {
  atexit(after_exit);
  catch_hook_signal(handler);
  setvbuf(stdout, NULL, _IONBF, 0);
  printf("ready\n");
  time_t t0 = time(NULL);
  for (long i = 0;; i++) {
    sink += work(i);
    if ((i & 0xfffff) == 0 && time(NULL) - t0 > 30) break;
  }
  self_raised = 1;
  raise(SIGURG);
  return 1;  // not reached
}
