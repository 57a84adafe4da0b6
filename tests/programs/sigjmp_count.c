// A SIGALRM storm (every 200 us) whose handler leaves by siglongjmp every third time, back
// to main's loop of instrumented calls: the signal interrupts callmon's hooks anywhere, and
// the hook it interrupted never finishes (docs/runtime.md, "Signals"). The program counts
// its own calls and prints them on stderr as `name calls` lines, for a comparison with the
// recording:
//  - exact: the handler, hleaf (called only from the handler), hdeep (only in the handler,
//    see `inside`), and tail/tleaf, called after the storm;
//  - deep and leaf, which the jumps abandon: each jump may leave one call of each recorded
//    but not counted (entered, stopped before its counter), so `jumps` is printed too.
// Arguments: `alt` (the handler runs on an alternate signal stack) or `noalt`; optionally
// `inside`: every handler call also longjmps inside itself (sigsetjmp in the handler, the
// jump from three calls deeper), which must not be taken for leaving it.
// stdout: "ok" (the same with and without callmon); exit status 0.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

enum { kJumps = 200, kTail = 1000 };

static sigjmp_buf main_jb;
static volatile long hits, jumps, deeps, leaves, hleaves, hdeeps, tails, tleaves;
static volatile int inside;
static volatile long hsink;

NOINLINE long leaf(long x) {
  leaves++;
  return x * 3 + 1;
}
NOINLINE long mid(long x) {
  long s = 0;
  for (int i = 0; i < 50; i++) s += leaf(x + i);
  return s;
}
NOINLINE long deep(int d, long x) {
  deeps++;
  return d ? deep(d - 1, x) + leaf(x) : mid(x);
}

NOINLINE long hleaf(long x) {
  hleaves++;
  return x + 1;
}
NOINLINE void hdeep(int d, sigjmp_buf* jb) {
  hdeeps++;
  if (d == 0) siglongjmp(*jb, 1);
  hdeep(d - 1, jb);
  hsink++;  // not a tail call: each level is a call in every mode
}

NOINLINE void handler(int sig) {
  (void)sig;
  hits++;
  if (inside) {
    sigjmp_buf jb;  // a jump that stays inside the handler
    if (sigsetjmp(jb, 0) == 0) hdeep(3, &jb);
  }
  hleaf(hits);
  if (hits % 3 == 0) {
    jumps++;
    siglongjmp(main_jb, 1);
  }
}

NOINLINE long tleaf(long x) {
  tleaves++;
  return x ^ 5;
}
NOINLINE long tail(long x) {
  tails++;
  return tleaf(x) + tleaf(x + 1);
}

int main(int argc, char** argv) {
  int alt = argc > 1 && strcmp(argv[1], "alt") == 0;
  inside = argc > 2 && strcmp(argv[2], "inside") == 0;
  static char alt_stack[65536];
  if (alt) {
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack};
    sigaltstack(&ss, 0);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART | (alt ? SA_ONSTACK : 0);
  sigaction(SIGALRM, &sa, 0);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, 0);
  long s = 0;
  while (jumps < kJumps) {
    sigsetjmp(main_jb, 1);
    for (int i = 0; i < 100 && jumps < kJumps; i++) s += deep(20, i);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, 0);
  for (int i = 0; i < kTail; i++) s += tail(i);
  printf("ok\n");
  fprintf(stderr,
          "jumps %ld\nhandler %ld\nhleaf %ld\nhdeep %ld\ndeep %ld\nleaf %ld\ntail %ld\n"
          "tleaf %ld\nsum %ld\n",
          jumps, hits, hleaves, hdeeps, deeps, leaves, tails, tleaves, s);
  return 0;
}
