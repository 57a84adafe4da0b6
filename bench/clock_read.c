/* Cost of one clock read (rdtsc) on this machine, for the real-program benchmark's floor:
 * the median over 7 loops of 10^7 back-to-back reads, in ns of this thread's CPU time per
 * read (time preempted by other programs is not counted). Run by
 * bench/real_programs.sh and bench/hot_path_breakdown.py; prints one number. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  enum { kLoops = 7, kReads = 10000000 };
  double per[kLoops];
  unsigned long long sink = 0;
  for (int l = 0; l < kLoops; ++l) {
    double t0 = now_ns();
    for (int i = 0; i < kReads; ++i) sink += __rdtsc();
    per[l] = (now_ns() - t0) / kReads;
  }
  qsort(per, kLoops, sizeof per[0], cmp);
  printf("%.2f\n", per[kLoops / 2] + (double)(sink & 0));
  return 0;
}
