// Whole calls across ucontext switches (analysis/call_pieces.hpp) and the flat profile's
// min and max of them (analysis/flat_profile.hpp): a call's duration is the sum of its
// pieces, known at its last piece or at the end of the thread when it was left suspended;
// a resumption goes to the context suspended earliest with the same functions.
#include <gtest/gtest.h>

#include <vector>

#include "analysis/call_pieces.hpp"
#include "analysis/flat_profile.hpp"

namespace callmon::analysis {
namespace {

FinishedCall piece(uint64_t addr, uint64_t time, uint32_t depth, ExitKind exit, bool inherited) {
  FinishedCall c;
  c.addr = addr;
  c.time = c.time_lo = c.time_hi = time;
  c.self = c.self_lo = c.self_hi = time;
  c.depth = depth;
  c.slot = static_cast<uint32_t>(addr);
  c.exit = exit;
  c.inherited = inherited;
  c.resumed = inherited;
  return c;
}

TEST(CallPieces, ThreePiecesMakeOneCall) {
  CallPieces p;
  p.on_suspended(piece(1, 10, 0, ExitKind::kSuspended, false));
  p.on_inherited_enter(1, 0);
  p.on_suspended(piece(1, 5, 0, ExitKind::kSuspended, true));
  p.on_inherited_enter(1, 0);
  PieceSums whole;
  ASSERT_TRUE(p.on_inherited_end(piece(1, 7, 0, ExitKind::kNormal, true), whole));
  EXPECT_EQ(whole.time, 22u);
  int left = 0;
  p.end_thread([&](uint32_t, const PieceSums&) { ++left; });
  EXPECT_EQ(left, 0);
}

TEST(CallPieces, ResumesTheContextSuspendedFirst) {
  CallPieces p;
  // Two contexts, each [task] (addr 2) under nothing; a third of another function.
  p.on_suspended(piece(2, 20, 0, ExitKind::kSuspended, false));  // A
  p.on_inherited_enter(9, 0);  // something else runs: unmatched, uncounted
  PieceSums whole;
  EXPECT_FALSE(p.on_inherited_end(piece(9, 1, 0, ExitKind::kNormal, true), whole));
  p.on_suspended(piece(2, 10, 0, ExitKind::kSuspended, false));  // B
  p.on_inherited_enter(2, 0);
  ASSERT_TRUE(p.on_inherited_end(piece(2, 25, 0, ExitKind::kNormal, true), whole));
  EXPECT_EQ(whole.time, 45u);  // A's 20 + 25
  std::vector<uint64_t> left;
  p.end_thread([&](uint32_t slot, const PieceSums& s) {
    EXPECT_EQ(slot, 2u);
    left.push_back(s.time);
  });
  EXPECT_EQ(left, std::vector<uint64_t>{10});  // B, left suspended
}

TEST(CallPieces, MatchesTheWholeStackOfAContext) {
  CallPieces p;
  // [main, run] suspended (innermost first), then [main] alone: a resumption of [main, run]
  // takes the first, not the second.
  p.on_suspended(piece(2, 4, 1, ExitKind::kSuspended, false));
  p.on_suspended(piece(1, 9, 0, ExitKind::kSuspended, false));
  p.on_suspended(piece(1, 3, 0, ExitKind::kSuspended, false));
  p.on_inherited_enter(1, 0);
  p.on_inherited_enter(2, 1);
  PieceSums whole;
  ASSERT_TRUE(p.on_inherited_end(piece(2, 6, 1, ExitKind::kNormal, true), whole));
  EXPECT_EQ(whole.time, 10u);
  ASSERT_TRUE(p.on_inherited_end(piece(1, 1, 0, ExitKind::kNormal, true), whole));
  EXPECT_EQ(whole.time, 10u);
  std::vector<uint64_t> left;
  p.end_thread([&](uint32_t, const PieceSums& s) { left.push_back(s.time); });
  EXPECT_EQ(left, std::vector<uint64_t>{3});
}

TEST(CallPieces, ForkFramesAreNotCounted) {
  CallPieces p;
  p.on_inherited_enter(1, 0);
  p.on_inherited_enter(2, 1);
  PieceSums whole;
  EXPECT_FALSE(p.on_inherited_end(piece(2, 5, 1, ExitKind::kNormal, true), whole));
  // Suspended, then resumed: still the parent's call.
  p.on_suspended(piece(1, 5, 0, ExitKind::kSuspended, true));
  p.on_inherited_enter(1, 0);
  EXPECT_FALSE(p.on_inherited_end(piece(1, 5, 0, ExitKind::kUnfinished, true), whole));
  int left = 0;
  p.end_thread([&](uint32_t, const PieceSums&) { ++left; });
  EXPECT_EQ(left, 0);
}

// The flat profile: min and max of whole calls; avg lies between them.
TEST(ProfileSinkPieces, MinAndMaxOfWholeCalls) {
  ProfileSink sink;
  // task A: 20 then 25 (45); task B: 10, left suspended; one plain call of 30.
  uint32_t slot = sink.on_enter(7, 0, 0, false);
  FinishedCall a = piece(7, 20, 0, ExitKind::kSuspended, false);
  a.slot = slot;
  sink.on_call(a);
  sink.on_enter(7, 0, 0, false);
  FinishedCall b = piece(7, 10, 0, ExitKind::kSuspended, false);
  b.slot = slot;
  sink.on_call(b);
  sink.on_enter(7, 0, 0, true);
  FinishedCall a2 = piece(7, 25, 0, ExitKind::kNormal, true);
  a2.slot = slot;
  sink.on_call(a2);
  sink.on_enter(7, 0, 0, false);
  FinishedCall c = piece(7, 30, 0, ExitKind::kNormal, false);
  c.slot = slot;
  sink.on_call(c);
  sink.end_thread();
  const FuncTicks& f = sink.functions()[slot];
  EXPECT_EQ(f.calls, 3u);
  EXPECT_EQ(f.incl, 85u);
  EXPECT_EQ(f.total, 85u);
  EXPECT_EQ(f.min, 10u);
  EXPECT_EQ(f.max, 45u);
  EXPECT_EQ(f.min_lo, 10u);
  EXPECT_EQ(f.max_hi, 45u);
}

}  // namespace
}  // namespace callmon::analysis
