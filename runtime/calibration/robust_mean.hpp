// The calibration's estimator (calibration.cpp): the typical value of many timing samples
// taken on a clock that may be coarse and is sometimes interrupted.
#pragma once

#include <algorithm>
#include <cstdint>

namespace callmon::rt {

// Mean of the samples up to 3x their median. Robust against the samples an interrupt or a
// page fault hit (tens of thousands of ticks), and unlike a median not stuck on the clock's
// granularity: on a VM whose TSC moves in steps of 21 ticks a 28-tick cost reads as 21 or
// 42, and only the mean of many samples resolves it. (The "mean of the fastest 90%" used
// before was biased on such a clock: it cut only 42s and took about 1.3 ticks, 5%, off the
// calibrated inner cost.) Reorders `v`; `n` > 0. nth_element finds the median without a sort
// (sorting the 32 000 leaf samples was a tenth of the runtime's start-up).
inline double robust_mean(uint64_t* v, int n) {
  std::nth_element(v, v + n / 2, v + n);
  uint64_t cap = 3 * v[n / 2];
  double sum = 0;
  int kept = 0;  // at least the median itself
  for (int i = 0; i < n; ++i) {
    if (v[i] <= cap) {
      sum += static_cast<double>(v[i]);
      ++kept;
    }
  }
  return sum / kept;
}

}  // namespace callmon::rt
