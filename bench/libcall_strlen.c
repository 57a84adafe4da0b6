/* Library-call compensation benchmark workload (bench/run_libcall_cost.py): main calls
 * libc's strlen() on a short string N times through the PLT (built -fno-builtin so the
 * call stays a call), and prints what one call took, timed around the whole loop: the
 * figure a recording's compensated strlen time should come close to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  const char* s = "callmon libcall";  // 15 bytes
  size_t sum = 0;
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    const char* p = s + (i & 1);
    // glibc declares strlen pure: without this gcc may call it once per distinct argument.
    __asm__ volatile("" : "+r"(p));
    sum += strlen(p);
  }
  double t1 = now_ns();
  printf("%.3f ns per call, sum %zu\n", (t1 - t0) / n, sum);
  return 0;
}
