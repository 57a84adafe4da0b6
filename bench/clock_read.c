/* The cost of one clock read (rdtsc) on this machine, for the benchmarks that compare a
 * probe's cost with it (bench/hot_path_breakdown.py): N reads back to back, each summed so
 * none is dropped, timed by the process's CPU clock. Prints ns per read. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 50000000;
  struct timespec a, b;
  unsigned long long sum = 0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  for (long i = 0; i < n; i++) sum += __rdtsc();
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  printf("%.3f %llu\n", ns / (double)n, sum & 1);
  return 0;
}
