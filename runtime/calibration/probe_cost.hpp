// From the calibration's records to the probe cost (calibration.cpp). A header of its own,
// free of the runtime's state, so that it is tested on records made by hand.
#pragma once

#include <cstdint>

#include "callmon/format/records.hpp"
#include "runtime/calibration/robust_mean.hpp"

namespace callmon::rt {

// Per-call probe cost in ticks.
struct ProbeCost {
  double inner;  // inside a call's own measured interval (its self time carries it)
  double outer;  // the whole enter+exit pair, as seen by the caller
  // Fenced clock only (else 0): the parts of `inner` and of `outer - inner` that lie outside
  // the stretches the hooks check for host bursts, where a burst is not caught
  // (docs/runtime.md, "Bursts between the checks").
  double exposed_in = 0;
  double exposed_out = 0;
  int block = 0;  // the block of rounds the costs come from (probe_cost_from_records)
  // The overlap calibration (calibration.cpp): how far, per probe pair, the compensated
  // time of program-like work came out below (hidden: the work ran on under the probes)
  // and above (serialized: the probes kept calls' work from running side by side) its
  // uninstrumented time, at most over its patterns. -1: not measured.
  double overlap_up = -1;
  double overlap_down = -1;
  // With a record-time filter on: what a call whose probes run but record nothing (a
  // filtered-out function's) adds to its caller's time. -1: not measured.
  double hidden = -1;
  // With the duration filter on: what a call the filter takes back adds to its caller's
  // time. -1: not measured.
  double taken_back = -1;
  // The library-call probe's own inner and outer costs (calibrate_libcall_cost), which
  // analysis charges the calls that are library calls instead of inner/outer. -1: not
  // measured (--no-libcall, or a slow path).
  double libcall_inner = -1;
  double libcall_outer = -1;
};

// The calibration's parent calls its leaf this many times per round.
inline constexpr int kCalibrationLeaves = 16;
// The rounds are decoded in this many blocks; the costs come from the least disturbed one.
// On a VM the host sometimes slows a whole block down (by 20-40% for a few milliseconds,
// seen once in a few runs with the fenced clock), which no per-sample cut can tell from
// the real cost, while an interrupt's single slow sample is already left out by robust_mean.
inline constexpr int kCalibrationBlocks = 4;

namespace detail {

// The unsigned LEB128 value at `p`; moves `p` past it. (The calibration's own records: no
// bounds to check.)
inline uint64_t get_leb(const uint8_t*& p) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

// The tick delta of the ENTER or EXIT record at `p` (version 6, format/records.hpp); moves
// `p` past it, for a new address past its delta too.
inline uint64_t next_delta(const uint8_t*& p) {
  auto get = [&p] { return get_leb(p); };
  uint64_t v = get();
  if ((v & 1) == 0) return v >> 1;  // EXIT
  if ((v & 7) == format::kV6NewTag) {
    get();
    return v >> format::kV6NewShift;
  }
  return (v & 15) == format::kV6CachedTag ? v >> format::kV6CachedShift
                                          : v >> format::kV6GuessedShift;
}

// Whether the record at `p` is an ENTER (any form) or an EXIT.
inline bool is_enter(const uint8_t* p) { return (*p & 3) == 1; }
inline bool is_exit(const uint8_t* p) { return (*p & 1) == 0 && *p != 0; }

// Decodes the ENTER record at `p` whose address is new (the first ENTERs of a fresh state
// are), relative to `last`: its address into `addr`; moves `p` past it. False when the
// record at `p` is no such ENTER.
inline bool enter_address(const uint8_t*& p, uintptr_t last, uintptr_t* addr) {
  auto get = [&p] { return get_leb(p); };
  if ((get() & 7) != format::kV6NewTag) return false;
  *addr = last + static_cast<uintptr_t>(format::unzigzag(get()));
  return true;
}

}  // namespace detail

// Whether `rounds` rounds of records at `buf` are each an ENTER, kCalibrationLeaves pairs of
// ENTER and EXIT, and an EXIT (what probe_cost_from_records decodes).
inline bool rounds_have_their_shape(const uint8_t* buf, int rounds) {
  const uint8_t* p = buf;
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 2 * kCalibrationLeaves + 2; ++k) {
      const bool enter = k == 0 || (k < 2 * kCalibrationLeaves + 1 && k % 2 == 1);
      if (!(enter ? detail::is_enter(p) : detail::is_exit(p))) return false;
      detail::next_delta(p);
    }
  return true;
}

// Decodes `rounds` rounds of depth-0 records at `buf`, each the parent's ENTER, its
// kCalibrationLeaves leaves' ENTER and EXIT, and its EXIT. A leaf's interval (EXIT - ENTER)
// is the inner cost; the gap from one leaf's EXIT to the next one's ENTER is what a call
// adds to its caller's time beyond that (outer = inner + gap). Only the gaps between two
// leaves count: the parent's own start and end are not a call's cost. (An earlier version
// shared the parent's whole interval among its leaves; that spread the parent's prologue
// and epilogue over 16 calls and took about a tick per call too much from a parent with
// many children: 40 ns per call from the benchmark's parent, which makes 101 calls.)
// `rounds` is a positive multiple of kCalibrationBlocks; `scratch` has room for
// 2 * rounds * kCalibrationLeaves values.
inline ProbeCost probe_cost_from_records(const uint8_t* buf, int rounds, uint64_t* scratch) {
  constexpr int kGapsPerRound = kCalibrationLeaves - 1;
  uint64_t* inner = scratch;
  uint64_t* gap = scratch + rounds * kCalibrationLeaves;
  const uint8_t* p = buf;
  for (int r = 0; r < rounds; ++r) {
    detail::next_delta(p);  // the parent's ENTER: its delta reaches back to the previous round
    for (int k = 0; k < kCalibrationLeaves; ++k) {
      // To the leaf's ENTER: from the previous leaf's EXIT (the first: the parent's start).
      uint64_t before = detail::next_delta(p);
      if (k) gap[r * kGapsPerRound + k - 1] = before;
      inner[r * kCalibrationLeaves + k] = detail::next_delta(p);
    }
    detail::next_delta(p);  // the parent's EXIT
  }
  int block_rounds = rounds / kCalibrationBlocks;
  int inners = block_rounds * kCalibrationLeaves, gaps = block_rounds * kGapsPerRound;
  ProbeCost cost{0, 0};
  for (int b = 0; b < kCalibrationBlocks; ++b) {
    double in = robust_mean(inner + b * inners, inners);
    double out = in + robust_mean(gap + b * gaps, gaps);
    if (b == 0 || out < cost.outer) cost = {in, out, 0, 0, b};
  }
  return cost;
}

// The calibration of the overlap (calibration_work.hpp) decodes `rounds` rounds of a parent
// and its kCalibrationLeaves leaves like probe_cost_from_records and stores each round's
// parent interval (ticks from its ENTER to its EXIT) in `out`.
inline void parent_intervals_from_records(const uint8_t* buf, int rounds, uint64_t* out) {
  const uint8_t* p = buf;
  for (int r = 0; r < rounds; ++r) {
    detail::next_delta(p);  // the parent's ENTER
    uint64_t sum = 0;
    for (int k = 0; k < 2 * kCalibrationLeaves + 1; ++k) sum += detail::next_delta(p);
    out[r] = sum;
  }
}

// The fenced clock's exposed costs: `covered_in` and `covered_out` are the ticks the hooks
// counted between their checked clock reads inside the calls' intervals and outside them
// (ThreadState::covered_*) over `pairs` probe pairs of the block `cost` comes from. What the calibrated costs hold beyond that
// per pair is exposed; never below 0 (the counts include small disturbances the block's
// robust mean leaves out).
inline void set_exposed(ProbeCost& cost, uint64_t covered_in, uint64_t covered_out,
                        uint64_t pairs) {
  if (pairs == 0) return;
  double in = static_cast<double>(covered_in) / static_cast<double>(pairs);
  double out = static_cast<double>(covered_out) / static_cast<double>(pairs);
  cost.exposed_in = cost.inner > in ? cost.inner - in : 0;
  cost.exposed_out = cost.outer - cost.inner > out ? cost.outer - cost.inner - out : 0;
}

}  // namespace callmon::rt
