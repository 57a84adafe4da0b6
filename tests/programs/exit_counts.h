/* The exit-time calls counted by the fixtures whose signal handler leaves one of callmon's
 * hooks by exit() (tests/programs/exit_in_handler.c, tests/attach/attach_exit.c): after_exit,
 * the atexit (or at_quick_exit) handler, makes kAtexit calls of tail, each two of tleaf; the
 * program's last exit-time function makes kFini calls of fleaf. Each function counts its own
 * calls (tails, tleaves, fleaves), which the program prints at its end for the test to
 * compare with the recording; the tests count them by name.
 *
 * The including file defines NOINLINE first (the attributes that keep these real,
 * separately recorded functions at -O2 in its compilers). */
#ifndef CALLMON_TEST_EXIT_COUNTS_H
#define CALLMON_TEST_EXIT_COUNTS_H

#ifndef NOINLINE
#error "define NOINLINE before including exit_counts.h"
#endif

enum { kAtexit = 100000, kFini = 20000 };

static volatile long tails, tleaves, fleaves, sink;

NOINLINE long tleaf(long x) {
  tleaves++;
  return x ^ 5;
}
NOINLINE long tail(long x) {
  tails++;
  return tleaf(x) + tleaf(x + 1);
}

NOINLINE long fleaf(long x) {
  fleaves++;
  return x - 1;
}

/* The atexit (at_quick_exit) handler's work: kAtexit calls of tail. */
static void after_exit(void) {
  for (int i = 0; i < kAtexit; i++) sink += tail(i);
}

#endif
