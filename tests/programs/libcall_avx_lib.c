/* The uninstrumented library of the libcall_avx fixture: __m256 in and out, reached from
 * instrumented code through the PLT, so through the library-call probe. */
#include <immintrin.h>

#include "fixture.h"

NOT_INSTRUMENTED __attribute__((target("avx"))) __m256 lib_vadd(__m256 a, __m256 b) {
  return _mm256_add_ps(a, b);
}
