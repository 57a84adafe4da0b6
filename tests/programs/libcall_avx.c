/* __m256 arguments and results through the library-call probe (docs/patching.md, "Vector
 * registers"): the program calls an AVX function of an uninstrumented shared library
 * (libcall_avx_lib.c) through the PLT, first as the process's first probe (the set-up runs
 * in the probe: libc's AVX2 routines end in vzeroupper) and then
 * often enough for the trace window to grow. `run` and the library function are AVX code
 * (target("avx")), so gcc passes the arguments and the result in ymm0/ymm1; the sums are
 * exact in float and checked against the run without callmon. */
#include <immintrin.h>
#include <stdio.h>

#include "fixture.h"

#define AVX __attribute__((target("avx")))

enum { kCalls = 400000 };

AVX __m256 lib_vadd(__m256 a, __m256 b);

static double sums[2];

NOT_INSTRUMENTED AVX static double total(__m256 v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  double s = 0;
  for (int i = 0; i < 8; ++i) s += f[i] * (i + 1);
  return s;
}

/* The caller of the library, left uninstrumented so that the library call's probe is the
 * process's first (its GOT is the program's, redirected all the same): the process's and
 * the thread's set-up run in it. */
NOT_INSTRUMENTED AVX static void run(void) {
  __m256 acc = _mm256_set_ps(8, 7, 6, 5, 4, 3, 2, 1);
  __m256 one = _mm256_set_ps(1, 0, 1, 0, 1, 0, 1, 1);
  acc = lib_vadd(acc, one);
  sums[0] = total(acc);
  for (long i = 0; i < kCalls; ++i) acc = lib_vadd(acc, (i & 1) ? one : _mm256_setzero_ps());
  sums[1] = total(acc);
}

/* Instrumented: the program has hooks of its mode (what tells the runtime to record). */
COUNTED void print_sums(void) { printf("%.0f %.0f\n", sums[0], sums[1]); }

NOT_INSTRUMENTED int main(void) {
  run();
  print_sums();
  return 0;
}
