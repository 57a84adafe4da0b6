// The base of a call's self-time range in the call walk (call_walk.hpp, pop()): from the
// call's own part of its span and the probes' cost charged to it, the least and the most of
// its own time under the cost's uncertainty, in ticks. SelfRangeTable gives the same figures
// for the bulk of the calls without the floating-point work: the walk spent about a sixth
// of its time there (four conversions between ticks and doubles per call).
#pragma once

#include <algorithm>
#include <iterator>
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

// self_bases() for the bulk of the calls: those with nothing charged but their pairs and
// their library-call extra (no unrecorded calls), fewer than kChildren direct children of
// which fewer than kLibChildren library calls, and an own part (whole ticks) below kOwn.
// Per kind of call (entry()): lo = max(own - a, 0) and hi = max(own - b, c) with a, b, c
// whole ticks, taken from self_bases() and checked against it for every own part below
// kOwn the first time a call of that kind comes (learn(); rounding could make the offsets
// differ somewhere: then that kind is left to self_bases()). A new cost forgets them all.
class SelfRangeTable {
 public:
  static constexpr uint64_t kChildren = 16;
  static constexpr uint64_t kLibChildren = 4;
  static constexpr uint64_t kOwn = 2048;
  static constexpr uint32_t kEntries = 2 * kLibChildren * kChildren;  // + 1: none

  SelfRangeTable() { forget(); }

  // The kind of a call with `children` direct children, `lib_children` of them library
  // calls, itself one if `libcall`; kEntries when the table has none for it.
  static uint32_t entry(uint64_t children, bool libcall, uint64_t lib_children) {
    if (((children / kChildren) | (lib_children / kLibChildren)) != 0) return kEntries;
    return static_cast<uint32_t>((static_cast<uint64_t>(libcall) * kLibChildren + lib_children) *
                                     kChildren +
                                 children);
  }

  // Forgets every kind (the cost changed).
  void forget() {
    std::fill(std::begin(state_), std::end(state_), kUnknown);
    state_[kEntries] = kFailed;
  }

  // Whether a call of kind `e` with own part `own` is covered.
  bool covers(uint32_t e, uint64_t own) const { return state_[e] == kOk && own < kOwn; }
  // Whether kind `e` is still to be learned.
  bool unknown(uint32_t e) const { return state_[e] == kUnknown; }

  // self_bases() of a covered call.
  SelfBases lookup_unchecked(uint32_t e, uint64_t own) const {
    const Offsets& o = offsets_[e];
    const auto s = static_cast<int64_t>(own);
    return {static_cast<uint64_t>(std::max<int64_t>(s - o.lo, 0)),
            static_cast<uint64_t>(std::max<int64_t>(s - o.hi, o.hi_min))};
  }

  // Learns kind `e` (unknown(e)), whose calls cost `cost` within [low, high] x that.
  void learn(uint32_t e, double cost, double low, double high) {
    auto exact = [&](uint64_t own) { return self_bases(ticks_to_double(own), cost, low, high); };
    const SelfBases top = exact(kOwn - 1);
    Offsets& o = offsets_[e];
    o.lo = static_cast<int64_t>(kOwn - 1) - static_cast<int64_t>(top.lo);
    o.hi = static_cast<int64_t>(kOwn - 1) - static_cast<int64_t>(top.hi);
    o.hi_min = static_cast<int64_t>(exact(0).hi);
    state_[e] = kOk;
    // The offsets come from the top; the check covers every own part.
    for (uint64_t own = 0; own < kOwn; ++own) {
      const SelfBases want = exact(own);
      const SelfBases got = lookup_unchecked(e, own);
      if (want.lo != got.lo || want.hi != got.hi) {
        state_[e] = kFailed;
        return;
      }
    }
  }

 private:
  static constexpr uint8_t kUnknown = 0, kOk = 1, kFailed = 2;
  struct Offsets {
    int64_t lo = 0, hi = 0, hi_min = 0;
  };
  Offsets offsets_[kEntries];
  uint8_t state_[kEntries + 1];
};

}  // namespace callmon::analysis
