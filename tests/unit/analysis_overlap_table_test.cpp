// The overlap terms of a call's range (WalkCost::overlap_up/overlap_down, per probe pair that
// borders the call's own time or lies inside it) are the same whether the call walk takes
// them from its table (under 64 pairs) or computes them: a parent of 0 to 200 leaf calls
// around the table's end, with no probe cost so that every other term of the range is the
// call's own figure.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analysis/call_walk.hpp"

namespace callmon::analysis {
namespace {

using format::Event;

struct Keep {
  std::vector<FinishedCall> calls;
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_call(const FinishedCall& c) { calls.push_back(c); }
  void on_special(const Event&, uint32_t) {}
};

Event record(Event::Type type, uint64_t ticks, uint64_t addr = 0) {
  Event e;
  e.type = type;
  e.ticks = ticks;
  e.addr = addr;
  return e;
}

uint64_t ceil_of(double v) { return static_cast<uint64_t>(std::ceil(v)); }

TEST(OverlapTable, RangesAroundTheTableEnd) {
  const double up = 1000.3, down = 2.25;
  for (uint64_t n : {0, 1, 62, 63, 64, 65, 200}) {
    Keep sink;
    CallWalker<Keep> walker(sink);
    WalkCost cost;
    cost.overlap_up = up;
    cost.overlap_down = down;
    walker.set_cost(cost);
    uint64_t t = 1'000'000;
    walker.feed(record(Event::kEnter, t, 0x1000));
    for (uint64_t i = 0; i < n; ++i) {
      t += 5000;
      walker.feed(record(Event::kEnter, t, 0x2000));
      t += 10;
      walker.feed(record(Event::kExit, t));
    }
    t += 5000;
    walker.feed(record(Event::kExit, t));
    walker.finish();
    ASSERT_EQ(sink.calls.size(), n + 1);
    for (uint64_t i = 0; i < n; ++i) {  // a leaf: its own pair
      const FinishedCall& c = sink.calls[i];
      EXPECT_EQ(c.self, 10u);
      EXPECT_EQ(c.self_hi, 10 + ceil_of(up));
      EXPECT_EQ(c.time_hi, 10 + ceil_of(up));
      EXPECT_EQ(c.self_lo, 10 - ceil_of(down));
      EXPECT_EQ(c.time_lo, 10 - ceil_of(down));
    }
    const FinishedCall& p = sink.calls[n];
    const double pairs = static_cast<double>(n + 1);  // its own and its children's
    EXPECT_EQ(p.self, 5000 * (n + 1)) << n;
    EXPECT_EQ(p.self_hi, p.self + ceil_of(up * pairs)) << n;
    EXPECT_EQ(p.self_lo, p.self - ceil_of(down * pairs)) << n;
    EXPECT_EQ(p.time_hi, p.time + ceil_of(up * pairs)) << n;
    // Its lower bound: its children's without their overlap terms, less its own for all.
    EXPECT_EQ(p.time_lo, p.self + n * 10 - ceil_of(down * pairs)) << n;
  }
}

}  // namespace
}  // namespace callmon::analysis
