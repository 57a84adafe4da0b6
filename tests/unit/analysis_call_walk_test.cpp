// The call walk (analysis/call_walk.hpp) on tiny traces written with format::ThreadWriter
// and read back with ThreadReader: self times, exit kinds (exception, longjmp, unwound,
// unfinished, cut), END/EXEC only when last, INHERIT frames, nested signal records and
// unmatched exits; which call ARGS and RETVAL records belong to, and that they change
// nothing for sinks that do not take them; the compensated clock (a call cheaper than its
// probes owes its parent), scheduler time (preempted out, blocked kept), calibrations in
// the run and calls that read a clock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/compensation.hpp"
#include "format/trace_writer.hpp"

namespace callmon::analysis {
namespace {

namespace fs = std::filesystem;
using format::UnwindReason;

struct Collect {
  std::vector<FinishedCall> calls;
  std::vector<format::Event::Type> specials;
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_call(const FinishedCall& c) { calls.push_back(c); }
  void on_special(const format::Event& ev, uint32_t) { specials.push_back(ev.type); }
};

class CallWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_walk_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a trace with `body`, then walks it; `finished` = close as a clean thread end.
  // `inner`/`outer`: probe cost to compensate (0: none).
  // `pauses`: subtract the PAUSE records (compensation's other half).
  void walk(const std::function<void(format::ThreadWriter&)>& body, bool finished = true,
            double inner = 0, double outer = 0, bool pauses = false) {
    std::string path = dir_ + "/1.0.1.events";
    auto w = format::ThreadWriter::create(path, 1, 1, "1.0");
    ASSERT_TRUE(w.ok()) << w.error();
    body(*w);
    ASSERT_TRUE(w->close(finished).ok());
    auto r = format::ThreadReader::open(path);
    ASSERT_TRUE(r.ok()) << r.error();
    CallWalker<Collect> walker(sink_);
    walker.set_probe_cost(inner, outer);
    if (spread_ > 0 || hidden_ > 0) {  // as compensation.hpp sets it
      WalkCost c{inner, outer};
      if (spread_ > 0) {  // the cost known within +-spread_
        c.low = 1 - spread_;
        c.high = 1 + spread_;
      }
      c.hidden = hidden_;
      walker.set_cost(c);
    }
    walker.subtract_pauses(pauses);
    if (!offcpu_.empty()) walker.set_offcpu(&offcpu_);
    walk_thread(*r, walker, [](uint64_t) {});
    paused_ = walker.paused_ticks();
    filtered_ = walker.filtered_calls();
    taken_back_ = walker.taken_back_calls();
    captured_ = walker.capture_ticks();
    unmatched_ = walker.unmatched_exits();
    clean_ = walker.ended_cleanly();
  }

  // The finished call of `addr` number `n` (in completion order).
  const FinishedCall& call(uint64_t addr, int n = 0) {
    for (const FinishedCall& c : sink_.calls)
      if (c.addr == addr && n-- == 0) return c;
    ADD_FAILURE() << "no call of " << addr;
    static FinishedCall none;
    return none;
  }

  std::string dir_;
  std::vector<format::OffCpu> offcpu_;  // the thread's off-CPU intervals (session.sched)
  double spread_ = 0;  // the probe cost's uncertainty (WalkCost::low/high), 0: exact
  double hidden_ = 0;  // WalkCost::hidden (0: as outer)
  uint64_t filtered_ = 0, taken_back_ = 0, captured_ = 0;
  Collect sink_;
  uint64_t unmatched_ = 0;
  uint64_t paused_ = 0;
  bool clean_ = false;
};

constexpr uint64_t kMain = 0x1000, kA = 0x1100, kB = 0x1200, kC = 0x1300;

TEST_F(CallWalkTest, SelfTimeSubtractsDirectChildrenOnly) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(10, kA);
    w.enter(20, kB);
    w.exit(50);  // B 30
    w.exit(60);  // A 50, self 20
    w.exit(100);  // main 100, self 50
    w.end(100);
  });
  ASSERT_EQ(sink_.calls.size(), 3u);
  EXPECT_EQ(call(kB).time, 30u);
  EXPECT_EQ(call(kB).depth, 2u);
  EXPECT_EQ(call(kA).self, 20u);
  EXPECT_EQ(call(kMain).self, 50u);
  EXPECT_EQ(call(kMain).depth, 0u);
  EXPECT_EQ(call(kMain).exit, ExitKind::kNormal);
  EXPECT_TRUE(clean_);
}

TEST_F(CallWalkTest, ExceptionUnwindsThreeFrames) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(10, kA);
    w.enter(20, kB);
    w.enter(30, kC);
    w.unwind(50, 3, UnwindReason::kException);
    w.exit(70);
    w.end(70);
  });
  ASSERT_EQ(sink_.calls.size(), 4u);
  EXPECT_EQ(sink_.calls[0].addr, kC);  // innermost first
  EXPECT_EQ(call(kC).exit, ExitKind::kException);
  EXPECT_EQ(call(kB).exit, ExitKind::kException);
  EXPECT_EQ(call(kA).exit, ExitKind::kException);
  EXPECT_EQ(call(kA).time, 40u);
  EXPECT_EQ(call(kA).self, 10u);
  EXPECT_EQ(call(kMain).exit, ExitKind::kNormal);
  EXPECT_EQ(call(kMain).self, 30u);
}

TEST_F(CallWalkTest, LongjmpAndUnknownUnwind) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(10, kA);
    w.enter(20, kB);
    w.unwind(30, 2, UnwindReason::kLongjmp);
    w.enter(40, kC);
    w.unwind(45, 1, UnwindReason::kUnknown);
    w.exit(50);
    w.end(50);
  });
  EXPECT_EQ(call(kB).exit, ExitKind::kLongjmp);
  EXPECT_EQ(call(kA).exit, ExitKind::kLongjmp);
  EXPECT_EQ(call(kA).time, 20u);
  EXPECT_EQ(call(kC).exit, ExitKind::kUnwound);
  EXPECT_EQ(call(kMain).self, 50u - 20u - 5u);
}

// A ucontext switch (docs/runtime.md, "Stack switching (ucontext)"): UNWIND reason 4
// suspends A and B, another context's C runs at depth 0, an INHERIT mid-stream takes A and
// B up again from its own time as continuations; the suspended time is in neither.
TEST_F(CallWalkTest, SuspendedCallsResumeAsContinuations) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kA);
    w.enter(10, kB);
    w.unwind(20, 2, UnwindReason::kSuspended);
    w.enter(30, kC);
    w.exit(40);
    w.inherit(50, {kA, kB});
    w.exit(55);
    w.exit(70);
    w.end(70);
  });
  ASSERT_EQ(sink_.calls.size(), 5u);
  EXPECT_EQ(call(kB).exit, ExitKind::kSuspended);
  EXPECT_EQ(call(kA).exit, ExitKind::kSuspended);
  EXPECT_FALSE(call(kA).inherited);
  EXPECT_EQ(call(kA).time, 20u);
  EXPECT_EQ(call(kC).depth, 0u);
  EXPECT_EQ(call(kB, 1).start, 50u);
  EXPECT_TRUE(call(kB, 1).inherited);
  EXPECT_TRUE(call(kB, 1).resumed);
  EXPECT_EQ(call(kB, 1).time, 5u);
  EXPECT_EQ(call(kA, 1).time, 20u);
  EXPECT_EQ(call(kA, 1).self, 15u);
  EXPECT_EQ(call(kA, 1).exit, ExitKind::kNormal);
}

TEST_F(CallWalkTest, CutStreamClosesAtLastTime) {
  walk(
      [](format::ThreadWriter& w) {
        w.enter(0, kMain);
        w.enter(10, kA);
        w.exit(20);
        w.enter(30, kB);
        w.lost(35, 2);
      },
      /*finished=*/false);
  ASSERT_EQ(sink_.calls.size(), 3u);
  EXPECT_EQ(call(kA).exit, ExitKind::kNormal);
  EXPECT_EQ(call(kB).exit, ExitKind::kCut);
  EXPECT_EQ(call(kB).end, 35u);
  EXPECT_EQ(call(kMain).exit, ExitKind::kCut);
  EXPECT_EQ(call(kMain).time, 35u);
  EXPECT_FALSE(clean_);
}

TEST_F(CallWalkTest, EndWithOpenFramesClosesThemUnfinished) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(10, kA);
    w.end(40);
  });
  EXPECT_EQ(call(kA).exit, ExitKind::kUnfinished);
  EXPECT_EQ(call(kA).end, 40u);
  EXPECT_EQ(call(kMain).exit, ExitKind::kUnfinished);
  EXPECT_EQ(call(kMain).self, 10u);
  EXPECT_TRUE(clean_);
}

TEST_F(CallWalkTest, EndOrExecNotLastIsIgnored) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.exec(10);  // a failed exec: the stream goes on
    w.enter(20, kA);
    w.exit(30);
    w.exit(40);
    w.end(50);
  });
  ASSERT_EQ(sink_.calls.size(), 2u);
  EXPECT_EQ(call(kMain).exit, ExitKind::kNormal);
  EXPECT_EQ(call(kMain).end, 40u);
}

TEST_F(CallWalkTest, ExecLastClosesUnfinished) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.exec(25);
  });
  EXPECT_EQ(call(kMain).exit, ExitKind::kUnfinished);
  EXPECT_EQ(call(kMain).end, 25u);
}

TEST_F(CallWalkTest, InheritedFramesOpenAtFirstTime) {
  walk([](format::ThreadWriter& w) {
    w.inherit(100, {kMain, kA});
    w.exit(105);  // A, inherited
    w.enter(110, kB);
    w.exit(130);
    w.exit(150);  // main, inherited
    w.end(150);
  });
  ASSERT_EQ(sink_.calls.size(), 3u);
  EXPECT_TRUE(call(kA).inherited);
  EXPECT_EQ(call(kA).start, 100u);
  EXPECT_EQ(call(kA).depth, 1u);
  EXPECT_FALSE(call(kB).inherited);
  EXPECT_EQ(call(kB).depth, 1u);
  EXPECT_TRUE(call(kMain).inherited);
  EXPECT_EQ(call(kMain).time, 50u);
  EXPECT_EQ(call(kMain).self, 50u - 5u - 20u);
}

TEST_F(CallWalkTest, NestedSignalRecordsNestWhereTheyHappened) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(10, kA);
    w.nested_enter(20, kC);  // a signal handler inside A
    w.nested_exit(30);
    w.exit(40);
    w.exit(50);
    w.end(50);
  });
  ASSERT_EQ(sink_.calls.size(), 3u);
  EXPECT_EQ(call(kC).depth, 2u);
  EXPECT_EQ(call(kC).time, 10u);
  EXPECT_EQ(call(kA).self, 20u);
}

TEST_F(CallWalkTest, UnmatchedExitIsCountedAndSkipped) {
  walk([](format::ThreadWriter& w) {
    w.exit(5);
    w.enter(10, kMain);
    w.exit(20);
    w.exit(25);
    w.end(30);
  });
  EXPECT_EQ(unmatched_, 2u);
  ASSERT_EQ(sink_.calls.size(), 1u);
  EXPECT_EQ(call(kMain).time, 10u);
}

TEST_F(CallWalkTest, SpecialsReachTheSink) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.fork(5, 42);
    w.lost(6, 3);
    w.exit(10);
    w.end(10);
  });
  std::vector<format::Event::Type> want = {format::Event::kFork, format::Event::kLost,
                                           format::Event::kEnd};
  EXPECT_EQ(sink_.specials, want);
}

// Overhead compensation, checked by hand: probe cost inner 2, outer 5 ticks.
//   main 0..100 calls A 10..60, which calls B 20..30 and C 40..50; then D 70..80 (leaf).
//   B, C, D (no descendants): time = 10 - 2 = 8, self 8.
//   A (2 descendants): time = 50 - 2 - 2*5 = 38, self = 38 - 8 - 8 = 22.
//   main (4 descendants): time = 100 - 2 - 4*5 = 78, self = 78 - 38 - 8 = 32.
// Without compensation the same trace gives the raw figures.
TEST_F(CallWalkTest, CompensationSubtractsProbeCostPerCallAndPerDescendant) {
  auto body = [](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(10, kA);
    w.enter(20, kB);
    w.exit(30);
    w.enter(40, kC);
    w.exit(50);
    w.exit(60);
    w.enter(70, 0x1400);
    w.exit(80);
    w.exit(100);
    w.end(100);
  };
  walk(body, true, 2, 5);
  EXPECT_EQ(call(kB).time, 8u);
  EXPECT_EQ(call(kB).self, 8u);
  EXPECT_EQ(call(kA).time, 38u);
  EXPECT_EQ(call(kA).self, 22u);
  EXPECT_EQ(call(kMain).time, 78u);
  EXPECT_EQ(call(kMain).self, 32u);
  EXPECT_EQ(call(kMain).end - call(kMain).start, 100u);  // the timeline itself is untouched

  sink_.calls.clear();
  walk(body);
  EXPECT_EQ(call(kA).time, 50u);
  EXPECT_EQ(call(kA).self, 30u);
  EXPECT_EQ(call(kMain).self, 40u);
}

// Under the fenced clock the cost also carries the host bursts expected where no check
// looks: the exposed ticks at the rate the entry hooks' first stretch caught them.
// Exposed 50 inside and 20 outside, 30 burst ticks per 1000 checked: 0.03 x 50 more per
// call, 0.03 x 70 more per descendant.
TEST(Compensation, CostAddsTheBurstsExpectedInTheExposedTicks) {
  format::ProbeCost cost{70, 150, 50, 20};
  format::ProbeCost c = probe_cost_with_bursts(cost, 1000, 30);
  EXPECT_DOUBLE_EQ(c.inner_ticks, 71.5);
  EXPECT_DOUBLE_EQ(c.outer_ticks, 152.1);
  // No burst caught, nothing checked (older files, another clock): the calibrated cost.
  EXPECT_DOUBLE_EQ(probe_cost_with_bursts(cost, 1000, 0).outer_ticks, 150);
  EXPECT_DOUBLE_EQ(probe_cost_with_bursts(cost, 0, 30).inner_ticks, 70);
}

// A fractional cost is subtracted exactly over many calls (the compensated clock keeps the
// fractions; each call's time is the distance between its ends rounded to a tick): inner 0.4, outer 1.4 ticks,
// main calls 1 000 leaves of 10 ticks each, back to back. Rounding each call's share on
// its own took 0 from every leaf (0.4 rounds down) and so left 400 ticks too many in the
// leaves' time and 400 too few in main's self.
TEST_F(CallWalkTest, CompensationOfAFractionalCostAddsUpOverManyCalls) {
  constexpr int kLeaves = 1000;
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    for (int i = 0; i < kLeaves; ++i) {
      w.enter(20 * i + 5, kA);
      w.exit(20 * i + 15);
    }
    w.exit(20 * kLeaves);
    w.end(20 * kLeaves);
  }, true, 0.4, 1.4);
  int64_t leaves = 0;
  for (int i = 0; i < kLeaves; ++i) leaves += call(kA, i).self;
  // Exactly: leaves 1000 * (10 - 0.4) = 9600; main 20000 - 0.4 - 1000 * 1.4 = 18599.6,
  // self 18599.6 - 9600 = 8999.6.
  // (Each sum is within a tick; main's self, the difference of two, within two.)
  EXPECT_NEAR(static_cast<double>(leaves), 9600, 1);
  EXPECT_NEAR(static_cast<double>(call(kMain).self), 8999.6, 2);
  EXPECT_NEAR(static_cast<double>(call(kMain).time), 18599.6, 1);
}

// A cost larger than a call's measured time leaves a self time of zero, never a negative
// one or an underflow, and no call shorter than one of its children.
TEST_F(CallWalkTest, CompensationNeverGoesBelowZero) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.enter(1, kA);
    w.exit(2);
    w.enter(3, kB);
    w.exit(30);
    w.exit(32);
    w.end(32);
  }, true, 3, 10);
  // A: 1 - 3 < 0 -> self 0; B: 27 - 3 = 24; main: own part 32 - 1 - 27 = 4, its cost
  // 3 + 2 x 7 = 17 -> self 0, time 0 + 0 + 24 = 24: as long as its longest child.
  EXPECT_EQ(call(kA).time, 0u);
  EXPECT_EQ(call(kA).self, 0u);
  EXPECT_EQ(call(kB).time, 24u);
  EXPECT_EQ(call(kMain).self, 0u);
  EXPECT_EQ(call(kMain).time, 24u);
  for (const FinishedCall& c : sink_.calls) {
    EXPECT_LE(c.self_lo, c.self);
    EXPECT_GE(c.self_hi, c.self);
    EXPECT_LE(c.time_lo, c.time);
    EXPECT_GE(c.time_hi, c.time);
  }
}

// The recorder's pauses leave the calls open while they lasted (all of them, the innermost
// one's self too), and no other call; without compensation they are only counted.
void pause_trace(format::ThreadWriter& w) {
  w.enter(0, kMain);
  w.enter(10, kA);
  w.pause(40, 25);  // A was open from 15 to 40 only because the recorder held the thread
  w.exit(50);       // A: 40 ticks, 15 of them its own
  w.enter(60, kB);
  w.exit(70);       // B: 10, opened after the pause
  w.pause(90, 5);   // in main's own time
  w.exit(100);      // main: 100 - 25 - 5 = 70, self 70 - 15 - 10 = 45
  w.end(100);
}

TEST_F(CallWalkTest, PausesLeaveTheCallsOpenDuringThem) {
  walk(pause_trace, true, 0, 0, true);
  EXPECT_EQ(call(kA).time, 15u);
  EXPECT_EQ(call(kA).self, 15);
  EXPECT_EQ(call(kB).time, 10u);
  EXPECT_EQ(call(kMain).time, 70u);
  EXPECT_EQ(call(kMain).self, 45);
  EXPECT_EQ(paused_, 30u);
  EXPECT_EQ(std::count(sink_.specials.begin(), sink_.specials.end(), format::Event::kPause), 2);
}

TEST_F(CallWalkTest, PausesAreOnlyCountedWithoutCompensation) {
  walk(pause_trace);
  EXPECT_EQ(call(kA).time, 40u);
  EXPECT_EQ(call(kMain).time, 100u);
  EXPECT_EQ(call(kMain).self, 50);
  EXPECT_EQ(paused_, 30u);
}

// Calls after END (the program's free() called by glibc after the key destructors) leave a
// stream ending without END but with nothing open: finished, not cut. With a call still
// open at the end, it is cut.
TEST_F(CallWalkTest, CallsAfterEndStillFinishCleanly) {
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.exit(10);
    w.end(20);
    w.enter(30, kA);
    w.exit(40);
  }, false);
  EXPECT_TRUE(clean_);
  EXPECT_EQ(call(kA).exit, ExitKind::kNormal);

  sink_.calls.clear();
  walk([](format::ThreadWriter& w) {
    w.enter(0, kMain);
    w.exit(10);
    w.end(20);
    w.enter(30, kA);
  }, false);
  EXPECT_FALSE(clean_);
  EXPECT_EQ(call(kA).exit, ExitKind::kCut);
}

// A sink that takes recorded values: notes (kind, the owner's addr) for each.
struct ValueCollect : Collect {
  std::vector<uint64_t> enters;
  std::vector<std::pair<char, uint64_t>> values;  // 'a'/'r', the owner's address
  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t, bool) {
    enters.push_back(addr);
    return static_cast<uint32_t>(enters.size());  // the slot: index + 1
  }
  void on_args(const format::Event& ev, uint32_t depth, uint32_t slot) {
    EXPECT_EQ(ev.type, format::Event::kArgs);
    EXPECT_EQ(ev.size, 1u);
    (void)depth;
    values.emplace_back('a', enters.at(slot - 1));
  }
  void on_retval(const format::Event& ev, const FinishedCall& call) {
    EXPECT_EQ(ev.type, format::Event::kRetval);
    values.emplace_back('r', call.addr);
  }
};
static_assert(ArgsSink<ValueCollect> && RetvalSink<ValueCollect>);
static_assert(!ArgsSink<Collect> && !RetvalSink<Collect>);

// Writes the calls of ValuesBelongToTheirCalls with (`values`) or without their values.
void value_trace(format::ThreadWriter& w, bool values) {
  const std::vector<uint8_t> p = {0x2a};  // the walker does not decode payloads
  auto a = [&](uint64_t t, bool nested = false) {
    if (values) w.args(t, p, nested);
  };
  auto r = [&](uint64_t t, bool nested = false) {
    if (values) w.retval(t, p, nested);
  };
  r(0);  // nothing exited yet: dropped
  w.enter(0, kMain);
  a(0);
  w.enter(10, kA);
  a(10);
  w.exit(20);
  r(20);
  r(20);  // a second value for the same call: dropped
  // A signal's handler between B's ENTER and ARGS, then between its EXIT and RETVAL.
  w.enter(30, kB);
  w.nested_enter(31, kC);
  a(31, true);
  w.nested_exit(32);
  r(32, true);
  a(33);
  w.exit(40);
  w.nested_enter(41, kC);
  w.nested_exit(42);
  r(42);
  // An exception leaves A: its RETVAL-like record belongs to nothing.
  w.enter(50, kA);
  w.unwind(60, 1, UnwindReason::kException);
  r(60);
  // A non-nested record after a nested EXIT ends the nested value's window.
  w.enter(70, kB);
  w.nested_enter(71, kC);
  w.nested_exit(72);
  w.exit(80);
  r(80, true);
  w.exit(90);
  r(90);
  w.end(90);
}

TEST_F(CallWalkTest, ValuesBelongToTheirCalls) {
  std::string path = dir_ + "/v.events";
  auto w = format::ThreadWriter::create(path, 1, 1, "1.0");
  ASSERT_TRUE(w.ok());
  value_trace(*w, true);
  ASSERT_TRUE(w->close(true).ok());
  auto rd = format::ThreadReader::open(path);
  ASSERT_TRUE(rd.ok());
  ValueCollect sink;
  CallWalker<ValueCollect> walker(sink);
  walk_thread(*rd, walker, [](uint64_t) {});
  const std::vector<std::pair<char, uint64_t>> want = {
      {'a', kMain}, {'a', kA}, {'r', kA}, {'a', kC}, {'r', kC}, {'a', kB}, {'r', kB},
      {'r', kMain}};
  EXPECT_EQ(sink.values, want);
  EXPECT_TRUE(sink.specials.size() == 1 && sink.specials[0] == format::Event::kEnd);
}

TEST_F(CallWalkTest, ValuesChangeNothingForOtherSinks) {
  walk([](format::ThreadWriter& w) { value_trace(w, false); });
  const std::vector<FinishedCall> plain = sink_.calls;
  const auto plain_specials = sink_.specials;
  sink_ = Collect{};
  walk([](format::ThreadWriter& w) { value_trace(w, true); });
  ASSERT_EQ(sink_.calls.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    const FinishedCall& a = plain[i];
    const FinishedCall& b = sink_.calls[i];
    EXPECT_TRUE(a.addr == b.addr && a.start == b.start && a.end == b.end &&
                a.time == b.time && a.self == b.self && a.depth == b.depth &&
                a.exit == b.exit)
        << i;
  }
  EXPECT_EQ(sink_.specials, plain_specials);
  EXPECT_TRUE(clean_);
}

TEST_F(CallWalkTest, PreemptedTimeIsTakenOutBlockedTimeStays) {
  offcpu_ = {{30, 70, true}, {150, 350, false}};
  walk(
      [](format::ThreadWriter& w) {
        w.enter(0, kMain);
        w.enter(10, kA);
        w.exit(110);
        w.enter(120, kB);
        w.exit(420);
        w.exit(500);
      },
      true, 0, 0, /*pauses=*/true);
  EXPECT_EQ(call(kA).time, 60u);
  EXPECT_EQ(call(kA).preempted, 40u);
  EXPECT_EQ(call(kA).offcpu, 0u);
  EXPECT_EQ(call(kB).time, 300u);
  EXPECT_EQ(call(kB).offcpu, 200u);
  EXPECT_EQ(call(kB).preempted, 0u);
  EXPECT_EQ(call(kMain).time, 460u);
  EXPECT_EQ(call(kMain).self, 100);
  EXPECT_EQ(call(kMain).preempted, 40u);
  EXPECT_EQ(call(kMain).offcpu, 200u);
}

TEST_F(CallWalkTest, ACallCheaperThanItsProbesOwesItsParent) {
  // inner 10, outer 20: A's 5 ticks hold less than its own probes' 10.
  spread_ = 0.03;
  walk(
      [](format::ThreadWriter& w) {
        w.enter(0, kMain);
        w.enter(10, kA);
        w.exit(15);
        w.exit(100);
      },
      true, 10, 20);
  EXPECT_EQ(call(kA).time, 0u);
  EXPECT_EQ(call(kA).self, 0);
  // Not a confident 0: within the cost's spread (6% of its 10 ticks, rounded up).
  EXPECT_EQ(call(kA).self_lo, 0u);
  EXPECT_EQ(call(kA).self_hi, 1u);
  // main: 100 - its own inner 10 - A's outer 20; the 5 A could not give come from main.
  EXPECT_EQ(call(kMain).time, 70u);
  EXPECT_EQ(call(kMain).self, 70);
  EXPECT_LE(call(kMain).self_lo, 70);
  EXPECT_GE(call(kMain).self_hi, 70);
}

TEST_F(CallWalkTest, ACalibrationInTheRunAppliesFromThere) {
  walk(
      [](format::ThreadWriter& w) {
        w.enter(0, kMain);
        w.enter(10, kA);
        w.exit(60);
        w.calib(60, 20 * format::kCalibScale, 40 * format::kCalibScale);
        w.enter(100, kB);
        w.exit(150);
        w.exit(200);
      },
      true, 10, 20);
  EXPECT_EQ(call(kA).time, 40u);  // 50 less the start-up inner cost, 10
  EXPECT_EQ(call(kB).time, 30u);  // 50 less the new inner cost, 20
  // The two calibrations disagree by 2x: B's range spans the cheaper probe's figure.
  EXPECT_LE(call(kB).time_lo, 30u);
  EXPECT_GE(call(kB).time_hi, 40u);
  EXPECT_TRUE(std::find(sink_.specials.begin(), sink_.specials.end(),
                        format::Event::kCalib) != sink_.specials.end());
}

// main calls L, which reads a clock (or not) and calls c twice.
void clock_trace(format::ThreadWriter& w, bool reads_clock) {
  w.enter(0, kMain);
  w.enter(10, kA);
  if (reads_clock) w.clock_read(10);
  w.enter(20, kC);
  w.exit(30);
  w.enter(40, kC);
  w.exit(50);
  w.exit(100);
  w.exit(110);
}

TEST_F(CallWalkTest, ACallThatReadsAClockMayLastItsWholeSpan) {
  walk([](format::ThreadWriter& w) { clock_trace(w, false); }, true, 10, 20);
  EXPECT_FALSE(call(kA).clocked);
  EXPECT_LT(call(kA).time_hi, 90u);
  sink_ = Collect{};
  walk([](format::ThreadWriter& w) { clock_trace(w, true); }, true, 10, 20);
  EXPECT_TRUE(call(kA).clocked);
  EXPECT_GE(call(kA).time_hi, 90u);  // its span: the probes may not have lengthened it
  EXPECT_LE(call(kA).time_lo, call(kA).time);
  EXPECT_FALSE(call(kMain).clocked);  // L is no mere clock helper: it keeps the mark
}

// main calls A, whose value capture took 4 ticks, then makes 5 calls a filter kept out of
// the trace and 2 the duration filter took back, and the recorder captured values for 7
// more ticks: none has a record but the HIDDEN ones.
void hidden_trace(format::ThreadWriter& w) {
  w.enter(0, kMain);
  w.enter(10, kA);
  w.hidden(60, 0, 0, 4);
  w.exit(60);
  w.hidden(200, 5, 2, 7);
  w.exit(200);
}

TEST_F(CallWalkTest, UnrecordedProbesAndValueCaptureAreTakenOut) {
  hidden_ = 8;
  walk(hidden_trace, true, 10, 20, true);
  EXPECT_EQ(filtered_, 5u);
  EXPECT_EQ(taken_back_, 2u);
  EXPECT_EQ(captured_, 11u);
  // A: 50 ticks less its capture (4) and its own inner cost (10).
  EXPECT_EQ(call(kA).time, 36u);
  // main: 200 less both captures (11), its inner cost (10), A's whole pair (20: its inner
  // part is inside A's interval, but not in A's time), the 5 filtered pairs at 8 and the 2
  // taken back at a recorded pair's 20.
  EXPECT_EQ(call(kMain).time, 200u - 11 - 10 - 20 - 5 * 8 - 2 * 20);
  EXPECT_EQ(call(kMain).self, call(kMain).time - 36);
  EXPECT_LE(call(kMain).self_lo, call(kMain).self);
  EXPECT_GE(call(kMain).self_hi, call(kMain).self);
}

TEST_F(CallWalkTest, UnrecordedProbesAreOnlyCountedWithoutCompensation) {
  walk(hidden_trace, true);
  EXPECT_EQ(filtered_, 5u);
  EXPECT_EQ(captured_, 11u);
  EXPECT_EQ(call(kA).time, 50u);
  EXPECT_EQ(call(kMain).time, 200u);
}

}  // namespace
}  // namespace callmon::analysis
