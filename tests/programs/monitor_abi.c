/* What a program keeps across its calls under a monitor whose callbacks clobber every
 * register a call may clobber (tests/e2e/monitor_abi_monitor.cpp): built with
 * -finstrument-functions, -pg or -pg -mfentry (run_monitor_abi.py), its functions take and
 * return what travels in registers (eight doubles, integers, a variadic list counted in al,
 * __m256d arguments and results in ymm, structures returned in rax:rdx and xmm0:xmm1) and
 * keep values in callee-saved registers across deep recursion. Prints the results, which
 * must be those of the run without a monitor, and `calls`, the instrumented calls made,
 * which the monitor must all have seen (docs/runtime.md, "Monitor mode and the vector
 * state"). Built with -mavx2. */
#include <immintrin.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

static long calls;

COUNTED double mix8(double a, double b, double c, double d, double e, double f, double g,
                    double h, long i) {
  calls++;
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + (double)i;
}

COUNTED __m256d add256(__m256d a, __m256d b, __m256d c) {
  calls++;
  return _mm256_add_pd(_mm256_mul_pd(a, b), c);
}

COUNTED double vsum(int n, ...) {
  calls++;
  va_list ap;
  va_start(ap, n);
  double s = 0;
  for (int i = 0; i < n; ++i) s += va_arg(ap, double) * (i + 1);
  va_end(ap);
  return s;
}

struct Pair { long a, b; };
struct Point { double x, y; };

COUNTED struct Pair pair(long x) {
  calls++;
  struct Pair p = {x * 3, x ^ 0x5a5a};
  return p;
}

COUNTED struct Point point(double x) {
  calls++;
  struct Point p = {x * 0.5, x + 0.25};
  return p;
}

/* a..e live across the recursive call: in callee-saved registers at -O2. */
COUNTED long keep(long n, long a, long b, long c, long d, long e) {
  calls++;
  if (n == 0) return a ^ b ^ c ^ d ^ e;
  long r = keep(n - 1, a * 3 + 1, b + n, c ^ n, d - n, e * 7);
  double f = mix8((double)a, (double)b, 0.5, 1.5, 2.5, 3.5, 4.5, (double)n, e);
  return r + a + b * 2 + c * 3 + d * 5 + e * 11 + n + (long)f;
}

NOT_INSTRUMENTED int main(int argc, char** argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 100;
  double acc = 0;
  long iacc = 0;
  __m256d v = _mm256_set_pd(1.0, 2.0, 3.0, 4.0);
  for (long i = 0; i < rounds; ++i) {
    double x = (double)i;
    acc += mix8(x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, i);
    v = add256(v, _mm256_set1_pd(0.5), _mm256_set_pd(x, -x, 2 * x, 1.0));
    acc += vsum(4, x, 1.5, -x, 2.25);
    struct Pair p = pair(i);
    iacc += p.a - p.b;
    struct Point q = point(x);
    acc += q.x * q.y;
    iacc ^= keep(40, i, i + 1, i + 2, i + 3, i + 4);
  }
  double out[4];
  _mm256_storeu_pd(out, v);
  printf("acc %.6e iacc %ld v %.6e %.6e %.6e %.6e\n", acc, iacc, out[0], out[1], out[2],
         out[3]);
  printf("calls %ld\n", calls);
  return 0;
}
