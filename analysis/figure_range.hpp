// When a figure is uncertain: every compensated time comes with a range that holds the true
// one (analysis/call_walk.hpp, docs/runtime.md "Honest times"). Where the range is narrow
// the outputs show the figure; where it is wide they show the range instead, so that no
// output gives a figure more precise than what was measured.
#pragma once

#include <algorithm>
#include <cstdint>

namespace callmon::analysis {

// A range wider than this share of its upper end is shown instead of its figure: the
// figure could then be off by more than about 10% either way.
inline constexpr double kUncertainWidth = 0.2;

// Whether the figure whose true value lies in [lo, hi] is uncertain.
inline bool is_uncertain(double lo, double hi) {
  return hi > lo && hi - lo > kUncertainWidth * hi;
}

// A function's summed bounds, in ticks: its total (outermost calls) and its self (all calls).
struct SummedBounds {
  uint64_t total_lo, total_hi, self_lo, self_hi;
};

// The self time (over all calls) never exceeds the total (over the outermost ones), so each
// bounds the other: the self's upper bound is at most the total's, the total's lower bound
// at least the self's. Per-call bounds add up looser than that in a recursive function (each
// probe pair's overlap bounds both a call's self and its parent's, the same function there).
inline SummedBounds bound_self_by_total(SummedBounds b) {
  return {std::max(b.total_lo, std::min(b.self_lo, b.total_hi)), b.total_hi,
          std::min(b.self_lo, b.total_hi), std::min(b.self_hi, b.total_hi)};
}

// A function's summed self time in ticks as the outputs show it: compensation can take a
// sum below 0 or above the total, the figure shown is kept within [0, total].
inline uint64_t clamped_self(int64_t self, uint64_t total) {
  return static_cast<uint64_t>(std::clamp<int64_t>(self, 0, static_cast<int64_t>(total)));
}

}  // namespace callmon::analysis
