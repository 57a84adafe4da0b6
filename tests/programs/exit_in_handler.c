// A signal handler that calls exit() (or quick_exit()) while the signal interrupted one of
// callmon's hooks: the hook never finishes, and before the fix its busy count stayed on the
// thread's guard, so every call of the atexit handlers and static destructors that followed
// was written as a nested record, and past the chunk's margin lost (docs/runtime.md,
// "Handlers that leave by exit").
//
// The interruption is forced: under callmon the test sets TEST_CALLMON_HOOK_SIGNAL=SIGURG
// (runtime/core/test_signal.hpp), so the first chunk switch inside a hook after the handler
// is installed delivers SIGURG there. Without callmon (or if it never came) main raises it
// itself after its loop, and prints `self 1`.
//
// Arguments: `exit` or `quick`. The program counts its own calls and prints them on stderr
// as `name calls` lines from its last exit-time function; stdout: "ok"; exit status 3.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#include "exit_counts.h"
#include "hook_signal.h"

enum { kLoop = 3000000 };

static volatile long hits, hleaves, leaves, works, self_raised;
static volatile int quick;

NOINLINE long leaf(long x) {
  leaves++;
  return x * 3 + 1;
}
NOINLINE long work(long x) {
  works++;
  return leaf(x) + leaf(x + 1);
}

NOINLINE long hleaf(long x) {
  hleaves++;
  return x + 1;
}

// The last code of the program's to run: the counts, with write (stdio may be gone).
NOINLINE void report(void) {
  for (int i = 0; i < kFini; i++) sink += fleaf(i);
  char buf[512];
  int n = snprintf(buf, sizeof buf,
                   "self %ld\nhandler %ld\nhleaf %ld\nwork %ld\nleaf %ld\ntail %ld\n"
                   "tleaf %ld\nfleaf %ld\n",
                   self_raised, hits, hleaves, works, leaves, tails, tleaves, fleaves);
  if (write(2, buf, (size_t)n) < 0) _exit(9);
  if (write(1, "ok\n", 3) < 0) _exit(9);
}

// A static destructor (for exit) or the last at_quick_exit handler (registered first).
__attribute__((destructor)) static void fini(void) {
  if (!quick) report();
}
static void quick_last(void) { report(); }

NOINLINE void handler(int sig) {
  (void)sig;
  hits++;
  sink += hleaf(hits);
  if (quick)
    quick_exit(3);
  exit(3);
}

int main(int argc, char** argv) {
  quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  if (quick) {
    at_quick_exit(quick_last);
    at_quick_exit(after_exit);
  } else {
    atexit(after_exit);
  }
  catch_hook_signal(handler);
  long s = 0;
  for (long i = 0; i < kLoop; i++) s += work(i);
  sink += s;
  self_raised = 1;
  raise(SIGURG);
  return 1;  // not reached
}
