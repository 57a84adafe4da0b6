/* Vector registers through the trampolines (docs/patching.md, "Vector registers"): functions
 * taking and returning __m256 (and __m512 where the processor has AVX-512F) called on new
 * threads, whose first call sets the thread up in the runtime (files, memory: libc's AVX
 * memcpy/memset end in vzeroupper, which zeroes the upper halves of every ymm register),
 * and then often enough for the thread's trace window to grow several times. Each result
 * is checked against its value without callmon (the sums are exact in float).
 * Recorded with `--patch=.` (built with no flag) and built with -pg -mfentry; the thread
 * functions are left uninstrumented so that the vector function's call is the thread's
 * first. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>

#include "fixture.h"

#define AVX __attribute__((target("avx")))
#define AVX512 __attribute__((target("avx512f")))

enum { kCalls = 600000 };

COUNTED AVX __m256 vadd(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }

/* Eight vector arguments: ymm0..ymm7, all of them. */
COUNTED AVX __m256 vsum8(__m256 a, __m256 b, __m256 c, __m256 d, __m256 e, __m256 f,
                         __m256 g, __m256 h) {
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)),
                       _mm256_add_ps(_mm256_add_ps(e, f), _mm256_add_ps(g, h)));
}

COUNTED AVX512 __m512 vadd512(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }

static double sums256[2], sums512[2];

NOT_INSTRUMENTED AVX static double total256(__m256 v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  double s = 0;
  for (int i = 0; i < 8; ++i) s += f[i] * (i + 1);
  return s;
}

NOT_INSTRUMENTED AVX static void* avx_thread(void* arg) {
  (void)arg;
  __m256 acc = _mm256_set_ps(8, 7, 6, 5, 4, 3, 2, 1);
  __m256 one = _mm256_set_ps(1, 0, 1, 0, 1, 0, 1, 1);
  acc = vadd(acc, one); /* the thread's first call: its set-up */
  __m256 x = vsum8(acc, one, one, one, one, one, one, acc);
  sums256[0] = total256(x);
  for (long i = 0; i < kCalls; ++i) acc = vadd(acc, (i & 1) ? one : _mm256_setzero_ps());
  sums256[1] = total256(acc);
  return NULL;
}

NOT_INSTRUMENTED AVX512 static double total512(__m512 v) {
  float f[16];
  _mm512_storeu_ps(f, v);
  double s = 0;
  for (int i = 0; i < 16; ++i) s += f[i] * (i + 1);
  return s;
}

NOT_INSTRUMENTED AVX512 static void* avx512_thread(void* arg) {
  (void)arg;
  __m512 acc = _mm512_set_ps(16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
  __m512 one = _mm512_set_ps(1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1);
  acc = vadd512(acc, one); /* the thread's first call */
  sums512[0] = total512(acc);
  for (long i = 0; i < kCalls; ++i) acc = vadd512(acc, (i & 1) ? one : _mm512_setzero_ps());
  sums512[1] = total512(acc);
  return NULL;
}

/* What avx512_thread computes, without AVX-512 (a processor without it prints the same). */
NOT_INSTRUMENTED static void scalar512(void) {
  double s0 = 0, s1 = 0;
  for (int i = 0; i < 16; ++i) {
    double one = (i == 0 || i % 2 == 1) ? 1 : 0;
    double v = (i + 1) + one;
    s0 += v * (i + 1);
    s1 += (v + one * (kCalls / 2)) * (i + 1);
  }
  sums512[0] = s0;
  sums512[1] = s1;
}

/* cpuid and xgetbv by hand: __builtin_cpu_supports would link libgcc's cpu-model code,
 * which --patch=. would patch and record. */
NOT_INSTRUMENTED static void cpuid2(unsigned leaf, unsigned sub, unsigned r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

/* AVX (or AVX-512F with `wide`) usable: the processor has it and the kernel enabled it. */
NOT_INSTRUMENTED static int has_avx(int wide) {
  unsigned r[4];
  cpuid2(1, 0, r);
  if (!(r[2] & (1u << 27)) || !(r[2] & (1u << 28))) return 0; /* OSXSAVE, AVX */
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 6) != 6) return 0;
  if (!wide) return 1;
  cpuid2(7, 0, r);
  return (r[1] & (1u << 16)) && (lo & 0xe0) == 0xe0; /* AVX512F, opmask and zmm state */
}

NOT_INSTRUMENTED int main(void) {
  if (!has_avx(0)) {
    printf("no AVX\n");
    return 0;
  }
  pthread_t t;
  pthread_create(&t, NULL, avx_thread, NULL);
  pthread_join(t, NULL);
  if (has_avx(1)) {
    pthread_create(&t, NULL, avx512_thread, NULL);
    pthread_join(t, NULL);
  } else {
    scalar512();
  }
  printf("256: %.0f %.0f 512: %.0f %.0f\n", sums256[0], sums256[1], sums512[0], sums512[1]);
  return 0;
}
