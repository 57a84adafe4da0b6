// When a figure is uncertain: every compensated time comes with a range that holds the true
// one (analysis/call_walk.hpp, docs/runtime.md "Honest times"). Where the range is narrow
// the outputs show the figure; where it is wide they show the range instead, so that no
// output gives a figure more precise than what was measured.
#pragma once

namespace callmon::analysis {

// A range wider than this share of its upper end is shown instead of its figure: the
// figure could then be off by more than about 10% either way.
inline constexpr double kUncertainWidth = 0.2;

// Whether the figure whose true value lies in [lo, hi] is uncertain.
inline bool is_uncertain(double lo, double hi) {
  return hi > lo && hi - lo > kUncertainWidth * hi;
}

}  // namespace callmon::analysis
