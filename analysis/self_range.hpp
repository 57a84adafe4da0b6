// The base of a call's self-time range in the call walk (call_walk.hpp, pop()): from the
// call's own part of its span and the probes' cost charged to it, the least and the most of
// its own time under the cost's uncertainty, in ticks. SelfRangeTable gives the same figures
// for the bulk of the calls without the floating-point work: the walk spent about a sixth
// of its time there (four conversions between ticks and doubles per call).
#pragma once

#include <algorithm>
#include <cstdint>

namespace callmon::analysis {

// The conversions between ticks and doubles, giving exactly what static_cast gives, by the
// signed conversions when the value fits in 63 bits (always, but on damaged input): x86-64
// has one instruction for those, and a branch and several for the unsigned ones.
inline double ticks_to_double(uint64_t x) {
  return static_cast<int64_t>(x) >= 0 ? static_cast<double>(static_cast<int64_t>(x))
                                      : static_cast<double>(x);
}
// v >= 0, truncated.
inline uint64_t double_to_ticks(double v) {
  return v < 0x1p63 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
}
// v rounded down (the cast truncates, which is floor for v > 0), at least 0. Casts rather
// than std::floor/ceil: without SSE4.1 those are calls, once per call walked.
inline uint64_t floor_ticks(double v) { return v > 0 ? double_to_ticks(v) : 0; }
// v rounded up, at least 0.
inline uint64_t round_up_ticks(double v) {
  if (!(v > 0)) return 0;
  const uint64_t t = double_to_ticks(v);
  return t + (ticks_to_double(t) < v);
}

struct SelfBases {
  uint64_t lo = 0;
  uint64_t hi = 0;
};

// The range's base for a call whose own part of its span is `own_part` (signed: its
// children's spans may overlap its probes' estimate) and whose probes cost `cost`, the true
// cost lying within [low, high] x that: lo at the dearest cost; hi at the cheapest, and
// never below the cost's spread (a call measured shorter than its probes at their cheapest
// says the cost varies per call more than the calibrations did: its own time is then known
// only to within that spread, not to be 0).
inline SelfBases self_bases(double own_part, double cost, double low, double high) {
  SelfBases b;
  b.lo = floor_ticks(own_part - cost * high);
  b.hi = round_up_ticks(std::max(own_part - cost * low, cost * (high - low)));
  return b;
}

// self_bases() for calls with fewer than kChildren direct children and an own part (whole
// ticks) below kOwn, when nothing else is charged to them (no unrecorded calls, no library
// call): per number of children, lo = max(own - a, 0) and hi = max(own - b, c) with a, b, c
// whole ticks, checked against self_bases() for every own part below kOwn when the cost is
// set (rounding could make the offsets differ somewhere: then that number of children, and
// every larger one, is left to self_bases()).
class SelfRangeTable {
 public:
  static constexpr uint64_t kChildren = 16;
  static constexpr uint64_t kOwn = 2048;

  // Sets the table for the cost `cost_of(children)` (what pop() charges a call with that
  // many children and nothing else) within [low, high] x that.
  template <class CostOf>
  void build(CostOf&& cost_of, double low, double high) {
    covered_ = 0;
    for (uint64_t k = 0; k < kChildren; ++k) {
      const double cost = cost_of(k);
      auto exact = [&](uint64_t own) { return self_bases(ticks_to_double(own), cost, low, high); };
      const SelfBases top = exact(kOwn - 1);
      Offsets& o = offsets_[k];
      o.lo = static_cast<int64_t>(kOwn - 1) - static_cast<int64_t>(top.lo);
      o.hi = static_cast<int64_t>(kOwn - 1) - static_cast<int64_t>(top.hi);
      o.hi_min = static_cast<int64_t>(exact(0).hi);
      // The offsets come from the top; the check covers every own part.
      for (uint64_t own = 0; own < kOwn; ++own) {
        const SelfBases want = exact(own);
        const SelfBases got = lookup_unchecked(k, own);
        if (want.lo != got.lo || want.hi != got.hi) return;
      }
      covered_ = k + 1;
    }
  }

  // Whether a call with `children` direct children and own part `own` is covered.
  bool covers(uint64_t children, uint64_t own) const {
    return children < covered_ && own < kOwn;
  }
  // self_bases() of a covered call.
  SelfBases lookup_unchecked(uint64_t children, uint64_t own) const {
    const Offsets& o = offsets_[children];
    const auto s = static_cast<int64_t>(own);
    return {static_cast<uint64_t>(std::max<int64_t>(s - o.lo, 0)),
            static_cast<uint64_t>(std::max<int64_t>(s - o.hi, o.hi_min))};
  }

 private:
  struct Offsets {
    int64_t lo = 0, hi = 0, hi_min = 0;
  };
  Offsets offsets_[kChildren];
  uint64_t covered_ = 0;  // the numbers of children below this are covered
};

}  // namespace callmon::analysis
