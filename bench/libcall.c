/* Library-call benchmark workload (bench/run_libcall.py): main calls libc's labs() N times
 * through the PLT, from one instrumented function (built -fno-builtin so the call stays a
 * call). Everything else the program does is a handful of calls. With `clock` as argv[2]
 * it instead reads the clock N times (the TSC, then CLOCK_MONOTONIC) and prints ns per
 * read: what one probe's clock read costs on this machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (argc > 2 && strcmp(argv[2], "clock") == 0) {
    volatile unsigned long long sink = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) sink += __rdtsc();
    double t1 = now_ns();
    struct timespec ts;
    for (long i = 0; i < n; ++i) {
      clock_gettime(CLOCK_MONOTONIC, &ts);
      sink += ts.tv_nsec;
    }
    double t2 = now_ns();
    printf("rdtsc %.2f ns, clock_gettime %.2f ns\n", (t1 - t0) / n, (t2 - t1) / n);
    return 0;
  }
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += labs(i - n / 2);
  printf("%ld\n", sum);
  return 0;
}
