// The calibration's decoding (runtime/calibration/probe_cost.hpp) on records made by hand: which deltas
// are a call's inner and outer cost, and which block of rounds the costs come from.
#include "runtime/calibration/probe_cost.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using callmon::rt::kCalibrationBlocks;
using callmon::rt::kCalibrationLeaves;
using callmon::rt::probe_cost_from_records;
namespace format = callmon::format;

void put_leb128(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<uint8_t>(b | (v ? 0x80 : 0)));
  } while (v);
}

// The three v6 forms of ENTER (format/records.hpp): a new address, a cached one, the
// guessed next callee. The calibration's decoder reads the time of each.
void put_enter(std::vector<uint8_t>& out, uint64_t dt, int64_t addr_delta) {
  put_leb128(out, dt << format::kV6NewShift | format::kV6NewTag);
  put_leb128(out, format::zigzag(addr_delta));
}

void put_enter_cached(std::vector<uint8_t>& out, uint64_t dt, unsigned slot) {
  put_leb128(out, dt << format::kV6CachedShift | uint64_t{slot} << 4 | format::kV6CachedTag);
}

void put_enter_guessed(std::vector<uint8_t>& out, uint64_t dt) {
  put_leb128(out, dt << format::kV6GuessedShift | format::kV6GuessedTag);
}

void put_exit(std::vector<uint8_t>& out, uint64_t dt) {
  std::vector<uint8_t> buf(12);
  out.insert(out.end(), buf.data(), format::put_exit_v6(buf.data(), dt));
}

// One round as the hooks write it: the parent's ENTER, `start` ticks to its first leaf,
// each leaf `inner` ticks long with `gap` ticks between two leaves, `end` ticks from the
// last leaf to the parent's EXIT. The parent's address is cached, the first leaf's new,
// the others guessed (each the same leaf after the same leaf).
void put_round(std::vector<uint8_t>& out, uint64_t start, uint64_t inner, uint64_t gap,
               uint64_t end) {
  put_enter_cached(out, 5000, 7);  // from the previous round: not part of any cost
  for (int k = 0; k < kCalibrationLeaves; ++k) {
    if (k) put_enter_guessed(out, gap);
    else put_enter(out, start, 64);
    put_exit(out, inner);
  }
  put_exit(out, end);
}

// The exposed parts are what the calibrated costs hold beyond the checked ticks per probe
// pair: inside the interval against the inner cost, outside it against the rest.
TEST(ProbeCost, ExposedIsTheCostBeyondTheCheckedTicks) {
  callmon::rt::ProbeCost c{70, 150};
  callmon::rt::set_exposed(c, 22 * 100, 60 * 100, 100);
  EXPECT_DOUBLE_EQ(c.exposed_in, 48);
  EXPECT_DOUBLE_EQ(c.exposed_out, 20);
  // More checked ticks than the cost (small disturbances the robust mean left out): 0.
  callmon::rt::set_exposed(c, 75 * 100, 90 * 100, 100);
  EXPECT_DOUBLE_EQ(c.exposed_in, 0);
  EXPECT_DOUBLE_EQ(c.exposed_out, 0);
}

double decode_outer(const std::vector<uint8_t>& records, int rounds, double* inner) {
  std::vector<uint64_t> scratch(2 * static_cast<size_t>(rounds) * kCalibrationLeaves);
  callmon::rt::ProbeCost c = probe_cost_from_records(records.data(), rounds, scratch.data());
  *inner = c.inner;
  return c.outer;
}

// The parent's own start and end (its prologue, the loop's set-up: here 900 and 700 ticks)
// are no call's cost. Sharing the parent's whole interval among its 16 leaves, as the
// decoding did before, gave an outer cost of 28 + 20 + (900 + 700 - 20) / 16 = 146.75.
TEST(ProbeCost, OuterIsInnerPlusTheGapBetweenTwoCalls) {
  std::vector<uint8_t> records;
  constexpr int kRounds = 8 * kCalibrationBlocks;
  for (int r = 0; r < kRounds; ++r) put_round(records, 900, 28, 20, 700);
  double inner = 0;
  double outer = decode_outer(records, kRounds, &inner);
  EXPECT_DOUBLE_EQ(inner, 28);
  EXPECT_DOUBLE_EQ(outer, 48);
}

// A block of rounds the host slowed down as a whole (every sample 40% dearer) does not
// count: the costs come from the least disturbed block.
TEST(ProbeCost, TakesTheLeastDisturbedBlock) {
  std::vector<uint8_t> records;
  constexpr int kPerBlock = 8;
  for (int b = 0; b < kCalibrationBlocks; ++b)
    for (int r = 0; r < kPerBlock; ++r)
      if (b == 1) put_round(records, 900, 39, 28, 700);
      else put_round(records, 900, 28, 20, 700);
  double inner = 0;
  double outer = decode_outer(records, kPerBlock * kCalibrationBlocks, &inner);
  EXPECT_DOUBLE_EQ(inner, 28);
  EXPECT_DOUBLE_EQ(outer, 48);
}

// A clock of coarse steps: the gaps read 21 or 42 (a 29.4-tick gap, 40% of them 42), the
// leaves 21 or 42 (a 33.6-tick interval). Both means are resolved, not rounded to a step.
TEST(ProbeCost, ResolvesCostsBetweenTheClockSteps) {
  std::vector<uint8_t> records;
  constexpr int kRounds = 10 * kCalibrationBlocks;
  for (int r = 0; r < kRounds; ++r) {
    put_enter(records, 5000, 0);
    for (int k = 0; k < kCalibrationLeaves; ++k) {
      int i = r * kCalibrationLeaves + k;
      put_enter(records, k == 0 ? 400 : (i % 5 < 2 ? 42 : 21), 0);
      put_exit(records, i % 5 < 3 ? 42 : 21);
    }
    put_exit(records, 300);
  }
  double inner = 0;
  double outer = decode_outer(records, kRounds, &inner);
  EXPECT_NEAR(inner, 33.6, 0.01);
  EXPECT_NEAR(outer - inner, 29.4, 0.1);
}

}  // namespace
