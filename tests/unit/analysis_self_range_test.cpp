// The self range's bases (analysis/self_range.hpp): the table the call walk takes most
// calls' bases from gives exactly what self_bases() gives, for every kind of call it learns
// and every own part it covers, whatever the cost (the calibrated ones of real recordings,
// random ones, costs a hair off whole ticks, none); kinds it has no entry for, and kinds not
// learned yet, are not covered; a new cost forgets what was learned.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "analysis/self_range.hpp"

namespace callmon::analysis {
namespace {

struct Cost {
  double inner, outer, lib_inner, lib_between, low, high;
  // What the walk charges a call of that kind with nothing unrecorded (range_cost).
  double of(uint64_t children, bool libcall, uint64_t lib_children) const {
    return inner + ticks_to_double(children) * (outer - inner) + 0.0 +
           (libcall ? lib_inner : 0) + ticks_to_double(lib_children) * lib_between;
  }
};

// Learns every kind for `c`, then checks every covered own part (and a few beyond) against
// self_bases(); returns how many kinds were covered.
int check_all(const Cost& c) {
  SelfRangeTable t;
  int covered = 0;
  for (uint64_t k = 0; k < SelfRangeTable::kChildren; ++k)
    for (int lib = 0; lib < 2; ++lib)
      for (uint64_t lc = 0; lc < SelfRangeTable::kLibChildren; ++lc) {
        const uint32_t e = SelfRangeTable::entry(k, lib != 0, lc);
        EXPECT_LT(e, SelfRangeTable::kEntries);
        EXPECT_TRUE(t.unknown(e));
        EXPECT_FALSE(t.covers(e, 0));
        const double cost = c.of(k, lib != 0, lc);
        t.learn(e, cost, c.low, c.high);
        EXPECT_FALSE(t.unknown(e));
        if (!t.covers(e, 0)) continue;
        ++covered;
        for (uint64_t own = 0; own < SelfRangeTable::kOwn; ++own) {
          const SelfBases want = self_bases(ticks_to_double(own), cost, c.low, c.high);
          const SelfBases got = t.lookup_unchecked(e, own);
          EXPECT_EQ(want.lo, got.lo) << "children " << k << " own " << own;
          EXPECT_EQ(want.hi, got.hi) << "children " << k << " own " << own;
          if (want.lo != got.lo || want.hi != got.hi) return covered;
        }
        EXPECT_FALSE(t.covers(e, SelfRangeTable::kOwn));
        EXPECT_FALSE(t.covers(e, UINT64_MAX));  // a negative own part, as unsigned
      }
  return covered;
}

TEST(SelfRange, TableMatchesTheFiguresForRealCosts) {
  // The SQLite recording's calibration (ticks of a 2.6 GHz TSC) and a start-up/exit spread.
  EXPECT_GT(check_all({48.934, 86.352, 81.787 - 48.934, (125.802 - 81.787) - (86.352 - 48.934),
                       0.97, 1.08}),
            0);
  // No compensation: no cost, no spread.
  EXPECT_EQ(check_all({0, 0, 0, 0, 1, 1}), 2 * 16 * 4);
  // Negative library-call extras (a stub cheaper than the hooks).
  EXPECT_GT(check_all({7.3, 13.9, -2.5, -1.25, 0.97, 1.03}), 0);
}

TEST(SelfRange, TableMatchesTheFiguresForRandomCosts) {
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> inner(0, 200), extra(0, 150), lib(-30, 60);
  std::uniform_real_distribution<double> spread(0.97, 1.5);
  for (int i = 0; i < 12; ++i) {
    const double in = inner(rng);
    check_all({in, in + extra(rng), lib(rng), lib(rng), 0.97, spread(rng)});
  }
}

TEST(SelfRange, CostsOffWholeTicksByAHairAreStillExact) {
  // Rounding of own - cost may land on the next whole tick for some own parts only: the
  // check must then leave the kind to self_bases() (or the offsets hold anyway).
  for (double eps : {1e-12, 1e-9, -1e-12, 0x1p-40})
    check_all({50 + eps, 90 + eps, 0, 0, 1, 1});
}

TEST(SelfRange, KindsBeyondTheTableAreNotCovered) {
  SelfRangeTable t;
  EXPECT_EQ(SelfRangeTable::entry(SelfRangeTable::kChildren, false, 0), SelfRangeTable::kEntries);
  EXPECT_EQ(SelfRangeTable::entry(3, true, SelfRangeTable::kLibChildren), SelfRangeTable::kEntries);
  EXPECT_FALSE(t.unknown(SelfRangeTable::kEntries));
  EXPECT_FALSE(t.covers(SelfRangeTable::kEntries, 0));
}

TEST(SelfRange, ANewCostForgetsWhatWasLearned) {
  SelfRangeTable t;
  const uint32_t e = SelfRangeTable::entry(2, false, 0);
  t.learn(e, 48.9 + 2 * 37.4, 0.97, 1.03);
  ASSERT_TRUE(t.covers(e, 100));
  t.forget();
  EXPECT_TRUE(t.unknown(e));
  EXPECT_FALSE(t.covers(e, 100));
}

}  // namespace
}  // namespace callmon::analysis
