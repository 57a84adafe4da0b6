// The time-ordered boxes of the HTML page (analysis/timeline.hpp): narrow calls merged per
// depth and caller, their callees dropped, nesting kept, the count bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "analysis/timeline.hpp"

namespace callmon::analysis {
namespace {

TimelineBox box(double start, double end, uint32_t depth, uint64_t addr) {
  TimelineBox b;
  b.start_ns = start;
  b.end_ns = end;
  b.depth = depth;
  b.addr = addr;
  b.busy_ns = end - start;
  return b;
}

TEST(Timeline, WideCallsKeptInTimeOrder) {
  // Post-order, as the call walk gives them.
  std::vector<TimelineBox> v{box(10, 40, 1, 2), box(50, 90, 1, 3), box(0, 100, 0, 1)};
  compact_timeline(v, 5);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].addr, 1u);
  EXPECT_EQ(v[1].addr, 2u);
  EXPECT_EQ(v[2].addr, 3u);
  EXPECT_EQ(v[1].count, 1u);
}

// A list whose first part is already in order (the sink's last compaction) gives what one
// sort of the whole list gives, and an out-of-order "sorted" prefix is caught.
TEST(Timeline, SortedPrefixMergedAsAWholeSort) {
  std::vector<TimelineBox> head{box(0, 100, 0, 1), box(10, 20, 1, 2), box(30, 40, 1, 3)};
  std::vector<TimelineBox> tail{box(150, 160, 1, 4), box(120, 130, 1, 5), box(110, 200, 0, 6),
                                box(25, 28, 1, 7)};
  for (size_t prefix : {size_t{0}, size_t{3}}) {
    std::vector<TimelineBox> a = head;
    a.insert(a.end(), tail.begin(), tail.end());
    std::vector<TimelineBox> b = a;
    compact_timeline(a, 1, prefix);
    compact_timeline(b, 1);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].addr, b[i].addr) << i;
  }
  std::vector<TimelineBox> wrong{box(30, 40, 1, 3), box(0, 100, 0, 1), box(10, 20, 1, 2)};
  compact_timeline(wrong, 1, 3);  // claimed sorted, is not
  ASSERT_EQ(wrong.size(), 3u);
  EXPECT_EQ(wrong[0].addr, 1u);
  EXPECT_EQ(wrong[1].addr, 2u);
  EXPECT_EQ(wrong[2].addr, 3u);
}

// Random call trees in the order their calls end (as the sink gets them), with calls of no
// length starting where a sibling or callee starts (the ties the linear reordering leaves),
// and the same boxes shuffled: compacted, every box the same and in the same place as after
// compacting them sorted.
TEST(Timeline, EndOrderShuffledAndSortedCompactAlike) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    std::vector<TimelineBox> ended;
    uint64_t addr = 0;
    // A call at `depth` starting at `start`; returns its end.
    auto call = [&](auto&& self, double start, uint32_t depth) -> double {
      double t = start;
      const int callees = depth < 6 ? static_cast<int>(rng() % 4) : 0;
      for (int i = 0; i < callees; ++i) {
        t += static_cast<double>(rng() % 3);  // 0: a callee starting where the last ended
        t = self(self, t, depth + 1);
      }
      t += static_cast<double>(rng() % 4);  // 0: no length
      ended.push_back(box(start, t, depth, ++addr));
      return t;
    };
    double t = 0;
    for (int i = 0; i < 5; ++i) t = call(call, t + static_cast<double>(rng() % 2), 0);
    std::vector<TimelineBox> sorted = ended, shuffled = ended;
    std::sort(sorted.begin(), sorted.end(), [](const TimelineBox& a, const TimelineBox& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns
             : a.depth != b.depth     ? a.depth < b.depth
             : a.end_ns != b.end_ns   ? a.end_ns > b.end_ns
                                      : a.addr < b.addr;
    });
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    const double min_ns = static_cast<double>(round % 4);
    compact_timeline(ended, min_ns);
    compact_timeline(shuffled, min_ns);
    compact_timeline(sorted, min_ns, sorted.size());
    ASSERT_EQ(ended.size(), sorted.size()) << round;
    ASSERT_EQ(shuffled.size(), sorted.size()) << round;
    for (size_t i = 0; i < sorted.size(); ++i) {
      EXPECT_EQ(ended[i].addr, sorted[i].addr) << round << " " << i;
      EXPECT_EQ(ended[i].count, sorted[i].count) << round << " " << i;
      EXPECT_EQ(ended[i].end_ns, sorted[i].end_ns) << round << " " << i;
      EXPECT_EQ(shuffled[i].addr, sorted[i].addr) << round << " " << i;
    }
  }
}

TEST(Timeline, NarrowSiblingsMergedUnderTheirCaller) {
  std::vector<TimelineBox> v{box(0, 100, 0, 1), box(200, 300, 0, 1)};
  // Under the first caller: three short calls close together, one of them with a callee;
  // under the second: one short call. They must not merge across callers.
  v.push_back(box(10, 12, 1, 5));
  v.push_back(box(10.5, 11, 2, 9));  // inside a narrow call: dropped
  v.push_back(box(13, 15, 1, 5));
  v.push_back(box(16, 18, 1, 6));
  v.push_back(box(98, 99, 1, 5));
  v.push_back(box(201, 202, 1, 5));
  compact_timeline(v, 5);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[1].start_ns, 10);
  EXPECT_EQ(v[1].end_ns, 18);
  EXPECT_EQ(v[1].count, 3u);
  EXPECT_TRUE(v[1].mixed);
  EXPECT_DOUBLE_EQ(v[1].busy_ns, 6);
  EXPECT_EQ(v[2].start_ns, 98);  // gap of 80 ns from the group: its own box
  EXPECT_EQ(v[2].count, 1u);
  EXPECT_EQ(v[3].start_ns, 200);
  EXPECT_EQ(v[4].start_ns, 201);
  EXPECT_FALSE(v[4].mixed);
  for (const TimelineBox& b : v) EXPECT_NE(b.depth, 2u);
}

TEST(Timeline, SinkBoundsTheBoxes) {
  format::ProcessMeta meta;
  meta.ticks_per_second = 1e9;
  TimelineSink sink(meta, 500);
  // 100 000 outer calls of 10 ns each with 5 ns gaps, each with one 2 ns callee.
  for (uint64_t k = 0; k < 100000; ++k) {
    FinishedCall child;
    child.addr = 2;
    child.vstart = 15 * k + 2;
    child.time = 2;
    child.depth = 1;
    sink.on_call(child);
    FinishedCall outer;
    outer.addr = 1;
    outer.vstart = 15 * k;
    outer.time = 10;
    outer.depth = 0;
    sink.on_call(outer);
  }
  double merged_below = 0;
  std::vector<TimelineBox> boxes = sink.finish(merged_below);
  EXPECT_LE(boxes.size(), 500u);
  EXPECT_GE(merged_below, (15.0 * 99999 + 10) / kTimelinePixels);  // the span over the pixels
  uint64_t outer_calls = 0;
  for (const TimelineBox& b : boxes) {
    EXPECT_EQ(b.depth, 0u);  // the callees of merged calls are gone
    outer_calls += b.count;
  }
  EXPECT_EQ(outer_calls, 100000u);
  for (size_t k = 1; k < boxes.size(); ++k) EXPECT_GE(boxes[k].start_ns, boxes[k - 1].end_ns);
}

TEST(Timeline, SinkMergesAsCallsComeUnderTheirOwnCaller) {
  format::ProcessMeta meta;
  meta.ticks_per_second = 1e9;
  TimelineSink sink(meta, 100000);
  // main over 1 000 callers of 300 ns (10 ns apart; wider than the span over the pixels),
  // each with ten 2 ns callees 28 ns apart (38 ns across two callers): past the first
  // compaction (4 096 boxes) the callees merge as they come, one box per caller, never
  // across two callers.
  sink.on_enter(1, 0, 0, false);
  const uint64_t callers = 1000;
  for (uint64_t k = 0; k < callers; ++k) {
    const uint64_t at = 310 * k;
    sink.on_enter(2, at, 1, false);
    for (uint64_t j = 0; j < 10; ++j) {
      sink.on_enter(3, at + 1 + 30 * j, 2, false);
      FinishedCall c;
      c.addr = 3;
      c.vstart = at + 1 + 30 * j;
      c.time = 2;
      c.depth = 2;
      sink.on_call(c);
    }
    FinishedCall p;
    p.addr = 2;
    p.vstart = at;
    p.time = 300;
    p.depth = 1;
    sink.on_call(p);
  }
  FinishedCall m;
  m.addr = 1;
  m.vstart = 0;
  m.time = 310 * callers;
  sink.on_call(m);
  double merged_below = 0;
  std::vector<TimelineBox> boxes = sink.finish(merged_below);
  std::vector<const TimelineBox*> parents;
  uint64_t callees = 0;
  for (const TimelineBox& b : boxes)
    if (b.depth == 1) parents.push_back(&b);
  EXPECT_EQ(parents.size(), callers);
  for (const TimelineBox& b : boxes) {
    if (b.depth != 2) continue;
    callees += b.count;
    int inside = 0;
    for (const TimelineBox* p : parents) inside += p->start_ns <= b.start_ns && b.end_ns <= p->end_ns;
    EXPECT_EQ(inside, 1) << "a merged box crosses its caller's end at " << b.start_ns;
  }
  EXPECT_EQ(callees, callers * 10);
  EXPECT_EQ(boxes.size(), 1 + 2 * callers);  // main, and per caller: it and one merged box
}

// Pieces of calls (timeline.hpp): a call a ucontext switch suspended and its continuation
// are two boxes at their times, marked, counted as one call; a fork child's inherited frame
// is a box marked inherited, no call; merged with short calls, a box keeps their marks.
TEST(Timeline, SinkKeepsPiecesOfCallsMarked) {
  format::ProcessMeta meta;
  meta.ticks_per_second = 1e9;
  TimelineSink sink(meta, 100000);
  FinishedCall first;  // 0..20, suspended
  first.addr = 1;
  first.vstart = 0;
  first.time = 20;
  first.exit = ExitKind::kSuspended;
  sink.on_enter(1, 0, 0, false);
  sink.on_call(first);
  FinishedCall other;  // 20..50, another context's call
  other.addr = 2;
  other.vstart = 20;
  other.time = 30;
  sink.on_enter(2, 20, 0, false);
  sink.on_call(other);
  FinishedCall cont;  // 50..70, the first call continued
  cont.addr = 1;
  cont.vstart = 50;
  cont.time = 20;
  cont.inherited = true;
  cont.resumed = true;
  sink.on_enter(1, 50, 0, true);
  sink.on_call(cont);
  FinishedCall fork;  // 70..100, a frame inherited at fork
  fork.addr = 3;
  fork.vstart = 70;
  fork.time = 30;
  fork.inherited = true;
  sink.on_enter(3, 70, 0, true);
  sink.on_call(fork);
  double merged_below = 0;
  std::vector<TimelineBox> boxes = sink.finish(merged_below);
  ASSERT_EQ(boxes.size(), 4u);
  EXPECT_EQ(boxes[0].marks, kMarkSuspended);
  EXPECT_EQ(boxes[0].not_calls, 0u);
  EXPECT_EQ(boxes[1].marks, 0);
  EXPECT_EQ(boxes[2].marks, kMarkContinued);
  EXPECT_EQ(boxes[2].not_calls, 1u);
  EXPECT_EQ(boxes[2].start_ns, 50);
  EXPECT_EQ(boxes[2].end_ns, 70);
  EXPECT_EQ(boxes[3].marks, kMarkInherited);
  EXPECT_EQ(boxes[3].not_calls, 1u);

  // Merged: a short continuation that also ends suspended, between two short calls.
  std::vector<TimelineBox> v{box(0, 100, 0, 1), box(10, 11, 1, 2), box(12, 13, 1, 2),
                             box(14, 15, 1, 2)};
  v[2].marks = kMarkContinued | kMarkSuspended;
  v[2].not_calls = 1;
  compact_timeline(v, 5);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].count, 3u);      // pieces
  EXPECT_EQ(v[1].not_calls, 1u);  // two calls
  EXPECT_EQ(v[1].marks, kMarkContinued | kMarkSuspended);
}

}  // namespace
}  // namespace callmon::analysis
