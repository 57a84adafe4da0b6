/* Uninstrumented copies of honest_times.c's tree() and cpu_bound(), built without the hook
 * flag: the program times them to know what the work costs without callmon. Keep them
 * identical to the originals. */
#include <stdint.h>

#include "fixture.h"

#define NODE_WORK(x)                                                   \
  do {                                                                 \
    for (int i_ = 0; i_ < 24; i_++) x = x * 6364136223846793005u + (x >> 29);          \
  } while (0)

COUNTED uint64_t plain_tree(unsigned depth, uint64_t seed) {
  uint64_t x = seed;
  NODE_WORK(x);
  if (depth == 0) return x;
  return plain_tree(depth - 1, x) ^ plain_tree(depth - 1, x + 1);
}

COUNTED uint64_t plain_cpu_bound(uint64_t n) {
  uint64_t x = n;
  for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005u + 1442695040888963407u;
  return x;
}
