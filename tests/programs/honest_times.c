/* Honest times (docs/runtime.md, "Honest times"): functions whose true cost the program
 * measures itself, so a test can hold callmon's figures against them while other processes
 * compete for the cores.
 *
 *   cpu_bound()    ~4 ms of arithmetic, no calls: truth = its thread CPU time
 *   sleeper()      nanosleep 3 ms: truth = its wall time (nearly all of it off the CPU)
 *   tree()         a binary tree of ~10 000 small calls (~40 ns of work each): truth = the
 *                  thread CPU time of plain_tree(), the same code in honest_times_plain.c,
 *                  built without the hook flag (median of 15 timings)
 *   clock_bound()  spins until 1 ms has passed on CLOCK_MONOTONIC, calling small
 *                  instrumented functions: its duration is the clock's, not its work's
 *
 * Each is called from its own measure_*() wrapper, which reads the clocks around it; the
 * program prints one line per function: "truth NAME CALLS TOTAL_NS [cpu|wall]".
 *
 * cpu_bound's truth is the kernel's thread CPU time, which leaves out what the hypervisor
 * took from the virtual CPU (steal): callmon, which sees the time the thread held a CPU,
 * cannot (docs/runtime.md, "Model, assumptions, limits"). So around each call the program
 * also reads the kernel's other account of the thread (its wall time less its run-queue
 * wait, /proc/thread-self/schedstat) and prints how far the two disagree, summed over the
 * calls where each is ahead: "hidden cpu_bound AHEAD_NS BEHIND_NS" (wall less wait less
 * CPU time, its positive and negative parts; "hidden cpu_bound -1 -1" when unreadable). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

/* honest_times_plain.c, built without the hook flag */
uint64_t plain_tree(unsigned depth, uint64_t seed);
uint64_t plain_cpu_bound(uint64_t n);
int plain_run_delay(uint64_t* ns);

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

volatile uint64_t g_sink;

/* The same small piece of work in every node of both trees (honest_times_plain.c repeats
 * it): 24 dependent multiply-shift-adds (not affine, so no compiler folds them), about 40 ns. */
#define NODE_WORK(x)                                                   \
  do {                                                                 \
    for (int i_ = 0; i_ < 24; i_++) x = x * 6364136223846793005u + (x >> 29);          \
  } while (0)

COUNTED uint64_t tree(unsigned depth, uint64_t seed) {
  uint64_t x = seed;
  NODE_WORK(x);
  if (depth == 0) return x;
  return tree(depth - 1, x) ^ tree(depth - 1, x + 1);
}

COUNTED uint64_t cpu_bound(uint64_t n) {
  uint64_t x = n;
  for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005u + 1442695040888963407u;
  return x;
}

COUNTED void sleeper(void) {
  struct timespec ts = {0, 3 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

COUNTED uint64_t tick_work(uint64_t x) {
  NODE_WORK(x);
  return x;
}

COUNTED uint64_t clock_bound(void) {
  uint64_t end = clock_ns(CLOCK_MONOTONIC) + 1000 * 1000, x = 1;
  while (clock_ns(CLOCK_MONOTONIC) < end)
    for (int i = 0; i < 16; i++) x = tick_work(x);
  return x;
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* Iterations of cpu_bound's loop that take about `ns` of thread CPU time here. */
static uint64_t cpu_iterations(uint64_t ns) {
  uint64_t n = 1 << 16, t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  g_sink = plain_cpu_bound(n);
  uint64_t dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
  return dt ? n * ns / dt : n;
}

/* The thread's wall time, CPU time and run-queue wait read together: the wait read before
 * and after the clocks must be the same (it grows when the thread comes back from a
 * preemption, so a preemption between the reads would count in one figure and not in
 * another). 0, or -1 when the wait cannot be read. */
struct kernel_view {
  uint64_t wall, cpu, wait;
};
static int read_kernel_view(struct kernel_view* v) {
  for (int tries = 0; tries < 100; tries++) {
    uint64_t after = 0;
    if (plain_run_delay(&v->wait) != 0) return -1;
    v->wall = clock_ns(CLOCK_MONOTONIC);
    v->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (plain_run_delay(&after) != 0) return -1;
    if (after == v->wait) return 0;
  }
  return -1;
}

COUNTED void measure_cpu(uint64_t n, int calls) {
  uint64_t total = 0, ahead = 0, behind = 0;
  int readable = 1;
  for (int i = 0; i < calls; i++) {
    struct kernel_view v0, v1;
    readable &= read_kernel_view(&v0) == 0;
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    g_sink = cpu_bound(n);
    total += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    readable &= read_kernel_view(&v1) == 0;
    int64_t hidden = (int64_t)(v1.wall - v0.wall) - (int64_t)(v1.wait - v0.wait) -
                     (int64_t)(v1.cpu - v0.cpu);
    if (hidden > 0)
      ahead += (uint64_t)hidden;
    else
      behind += (uint64_t)-hidden;
  }
  printf("truth cpu_bound %d %llu cpu\n", calls, (unsigned long long)total);
  if (readable)
    printf("hidden cpu_bound %llu %llu\n", (unsigned long long)ahead, (unsigned long long)behind);
  else
    printf("hidden cpu_bound -1 -1\n");
}

COUNTED void measure_sleep(int calls) {
  uint64_t total = 0;
  for (int i = 0; i < calls; i++) {
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    sleeper();
    total += clock_ns(CLOCK_MONOTONIC) - t0;
  }
  printf("truth sleeper %d %llu wall\n", calls, (unsigned long long)total);
}

/* The tree's truth: the median thread CPU time of the uninstrumented copy. */
COUNTED void measure_tree(unsigned depth, int calls) {
  enum { kTimings = 15 };
  uint64_t plain[kTimings];
  for (int i = 0; i < kTimings; i++) {
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    g_sink = plain_tree(depth, (uint64_t)i);
    plain[i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
  }
  qsort(plain, kTimings, sizeof plain[0], cmp_u64);
  for (int i = 0; i < calls; i++) g_sink = tree(depth, (uint64_t)i);
  printf("truth tree %d %llu cpu\n", calls, (unsigned long long)plain[kTimings / 2] * calls);
}

COUNTED void measure_clock_bound(int calls) {
  uint64_t total = 0;
  for (int i = 0; i < calls; i++) {
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    g_sink = clock_bound();
    total += clock_ns(CLOCK_MONOTONIC) - t0;
  }
  printf("truth clock_bound %d %llu wall\n", calls, (unsigned long long)total);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  uint64_t n = cpu_iterations(4 * 1000 * 1000);
  measure_cpu(n, rounds);
  measure_sleep(rounds);
  measure_tree(12, rounds); /* 2^13 - 1 = 8191 calls each */
  measure_clock_bound(rounds);
  return 0;
}
