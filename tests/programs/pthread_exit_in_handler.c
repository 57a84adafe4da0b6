// A signal handler that ends its thread with pthread_exit() while the signal interrupted
// one of callmon's hooks in that thread: pthread_exit unwinds (a forced unwind) out of the
// handler, through the signal frame and the interrupted hook, and the hook never finishes.
// Before the fix its busy count stayed on the thread's guard, so the calls of the thread's
// cleanup handlers that run during the unwind were written as nested records and, past the
// chunk's margin, lost (docs/runtime.md, "Handlers that leave by exit").
//
// The interruption is forced: under callmon the test sets TEST_CALLMON_HOOK_SIGNAL=SIGURG
// (runtime/core/test_signal.hpp), so every chunk switch inside a hook delivers SIGURG to the
// thread that switched. The handler ends the victim thread the first time it runs there
// (other threads' signals return at once, counted). Without callmon (or if no signal came
// in time) the victim raises the signal itself after its loop, and `self 1` is printed.
//
// Threads: the victim (vwork/vleaf in a loop; its cleanup handler calls cleaf kClean
// times), two others (owork/oleaf, kOther rounds each); main joins them, checks that the
// victim ended with pthread_exit's value, calls mwork, and its atexit handler calls xleaf
// kAtexit times. The program counts its own calls and prints them on stderr as `name
// calls` lines from that handler; stdout: "ok"; exit status 0 (1 if a join went wrong).
#include <pthread.h>
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

#include "hook_signal.h"

enum { kLoop = 3000000, kOther = 1000000, kClean = 20000, kMain = 20000, kAtexit = 50000 };

static volatile long vworks, vleaves, hleaves, cleaves, oworks, oleaves, mworks, xleaves;
static volatile long self_raised, other_hits, handler_exits, bad, sink;
static pthread_t victim;
static volatile int victim_started;

NOINLINE long vleaf(long x) {
  __atomic_fetch_add(&vleaves, 1, __ATOMIC_RELAXED);
  return x * 3 + 1;
}
NOINLINE long vwork(long x) {
  __atomic_fetch_add(&vworks, 1, __ATOMIC_RELAXED);
  return vleaf(x) + vleaf(x + 1);
}
NOINLINE long hleaf(long x) {
  __atomic_fetch_add(&hleaves, 1, __ATOMIC_RELAXED);
  return x + 1;
}
NOINLINE long cleaf(long x) {
  __atomic_fetch_add(&cleaves, 1, __ATOMIC_RELAXED);
  return x ^ 3;
}
NOINLINE long oleaf(long x) {
  __atomic_fetch_add(&oleaves, 1, __ATOMIC_RELAXED);
  return x - 1;
}
NOINLINE long owork(long x) {
  __atomic_fetch_add(&oworks, 1, __ATOMIC_RELAXED);
  return oleaf(x) + oleaf(x + 2);
}
NOINLINE long mwork(long x) {
  __atomic_fetch_add(&mworks, 1, __ATOMIC_RELAXED);
  return x * 7;
}
NOINLINE long xleaf(long x) {
  __atomic_fetch_add(&xleaves, 1, __ATOMIC_RELAXED);
  return x + 5;
}

NOINLINE void handler(int sig) {
  (void)sig;
  if (!victim_started || !pthread_equal(pthread_self(), victim)) {
    __atomic_fetch_add(&other_hits, 1, __ATOMIC_RELAXED);
    return;
  }
  handler_exits++;
  sink += hleaf(handler_exits);
  pthread_exit((void*)42);
}

static void cleanup(void* arg) {
  (void)arg;
  long s = 0;
  for (long i = 0; i < kClean; i++) s += cleaf(i);
  sink += s;
}

static void* victim_main(void* arg) {
  (void)arg;
  long s = 0;
  pthread_cleanup_push(cleanup, 0);
  for (long i = 0; i < kLoop; i++) s += vwork(i);
  sink += s;
  self_raised = 1;
  pthread_kill(pthread_self(), SIGURG);
  pthread_cleanup_pop(0);
  return 0;  // not reached
}

static void* other_main(void* arg) {
  (void)arg;
  long s = 0;
  for (long i = 0; i < kOther; i++) s += owork(i);
  sink += s;
  return 0;
}

static void at_end(void) {
  long s = 0;
  for (long i = 0; i < kAtexit; i++) s += xleaf(i);
  sink += s;
  char buf[512];
  int n = snprintf(buf, sizeof buf,
                   "self %ld\nhandler_exits %ld\nvwork %ld\nvleaf %ld\nhleaf %ld\ncleaf %ld\n"
                   "owork %ld\noleaf %ld\nmwork %ld\nxleaf %ld\nother_hits %ld\nbad %ld\n",
                   self_raised, handler_exits, vworks, vleaves, hleaves, cleaves, oworks,
                   oleaves, mworks, xleaves, other_hits, bad);
  if (write(2, buf, (size_t)n) < 0) _exit(9);
}

int main(void) {
  atexit(at_end);
  catch_hook_signal(handler);
  pthread_t others[2];
  // A signal the victim takes before its id is known here returns, as the others' do.
  if (pthread_create(&victim, 0, victim_main, 0) != 0) return 2;
  victim_started = 1;
  for (int i = 0; i < 2; i++)
    if (pthread_create(&others[i], 0, other_main, 0) != 0) return 2;
  void* ret = 0;
  if (pthread_join(victim, &ret) != 0 || ret != (void*)42) bad++;
  for (int i = 0; i < 2; i++)
    if (pthread_join(others[i], 0) != 0) bad++;
  long s = 0;
  for (long i = 0; i < kMain; i++) s += mwork(i);
  sink += s;
  if (handler_exits != 1) bad++;
  printf("ok\n");
  return bad ? 1 : 0;
}
