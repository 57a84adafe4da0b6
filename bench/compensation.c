/* Workload for bench/run_compensation.py: functions with known costs — a tiny leaf called
 * millions of times, a mid-size function, and a parent that calls both and has work of its
 * own. `compensation time` measures each one's cost per call in this (uninstrumented)
 * build; `compensation run N` is what gets recorded; `compensation bursts` measures the
 * machine's interruptions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

static volatile unsigned sink;

/* A dependent chain of 8 multiply-adds (about 15 ns), carried from call to call through
 * `sink`: the processor cannot overlap one call's work with the next, so its cost per call
 * is well defined. (A body the compiler folds into one multiply costs under a nanosecond
 * between calls, far below the clock's 10 ns granularity on some VMs: no profiler can
 * time that within 25%.) */
__attribute__((noinline)) void leaf(void) {
  unsigned x = sink;
  for (int i = 0; i < 8; ++i) x = x * x + 7u;
  sink = x;
}

__attribute__((noinline)) void mid(void) {
  unsigned x = sink;
  for (int i = 0; i < 200; ++i) x = x * x + (unsigned)i;
  sink = x;
}

__attribute__((noinline)) void parent(void) {
  unsigned x = sink;
  for (int i = 0; i < 100; ++i) x = x * x + (unsigned)i;  /* its own work */
  sink = x;
  for (int i = 0; i < 100; ++i) leaf();
  mid();
}

/* parent() without its own work, timed (never recorded) to take the children's cost out of
 * parent()'s in the same context: calls from the same loop, the same chain through sink. */
__attribute__((noinline)) void parent_children_only(void) {
  for (int i = 0; i < 100; ++i) leaf();
  mid();
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);  /* preemption excluded */
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best of 7 rounds of `n` calls: ns per call. */
static double per_call(void (*f)(void), long n) {
  double best = 1e30;
  for (int round = 0; round < 7; ++round) {
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) f();
    double t = (now_ns() - t0) / (double)n;
    if (t < best) best = t;
  }
  return best;
}

static void empty(void) {}

/* Share of wall time lost in bursts (clock reads more than 2 000 ticks apart) over a loop
 * of `bytes` steps, each writing 2 bytes of fresh memory when `mem` is given (as a
 * recording does) or nothing. On a VM these bursts are the host's work, not the program's:
 * a timer tick's exit, or host-side faults on guest memory that is written. */
static void bursts(const char* what, unsigned char* mem, size_t bytes) {
  unsigned long long start = __rdtsc(), prev = start, lost = 0, n = 0;
  for (size_t i = 0; i < bytes; i += 2) {
    if (mem) mem[i] = mem[i + 1] = (unsigned char)i;
    unsigned long long t = __rdtsc();
    if (t - prev > 2000) lost += t - prev, ++n;
    prev = t;
    for (volatile int k = 0; k < 3; ++k) {}
  }
  printf("%s: %.1f%% of the time in %llu bursts\n", what, 100.0 * lost / (prev - start), n);
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "time") == 0) {
    double loop = per_call(empty, 1000000);
    double l = per_call(leaf, 2000000) - loop;
    double m = per_call(mid, 20000) - loop;
    double p = per_call(parent, 20000);
    double c = per_call(parent_children_only, 20000);
    /* Self costs, as a profiler should report them. */
    printf("leaf %.3f\nmid %.3f\nparent %.3f\n", l, m, p - c);
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "bursts") == 0) {
    size_t bytes = 32u << 20;
    unsigned char* mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) return 1;
    bursts("loop, no writes", NULL, bytes);
    bursts("loop writing fresh memory", mem, bytes);
    return 0;
  }
  long n = argc >= 3 ? atol(argv[2]) : 20000;
  for (long i = 0; i < n; ++i) parent();
  printf("done %u\n", sink & 1);
  return 0;
}
