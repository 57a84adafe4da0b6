// The call walk's kind-specific entry points (CallWalker::feed_enter and feed_exit, which
// the decoded batches of walk_thread_prefetched use) give exactly what feed() gives: the
// same calls with the same figures, ranges and exit kinds, the same RETVAL pairing and the
// same thread counters, on random streams that mix plain ENTER/EXIT with everything else
// (nested records, UNWIND of every reason, exits with nothing open, INHERIT frames, PAUSE,
// CALIB, HIDDEN, CLOCK, LOST, ARGS/RETVAL, off-CPU intervals) under a probe cost with
// library-call extras and overlap, and without one.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "analysis/call_walk.hpp"
#include "format/sched_file.hpp"

namespace callmon::analysis {
namespace {

using format::Event;

// Keeps every finished call, every RETVAL's call and every ARGS's owner.
struct Keep {
  std::vector<FinishedCall> calls;
  std::vector<std::pair<uint64_t, uint64_t>> retvals;  // (RETVAL ticks, its call's start)
  std::vector<std::pair<uint64_t, uint32_t>> args;     // (ARGS ticks, owner's depth)
  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t, bool) {
    return static_cast<uint32_t>(addr);
  }
  void on_call(const FinishedCall& c) { calls.push_back(c); }
  void on_special(const Event&, uint32_t) {}
  void on_args(const Event& ev, uint32_t depth, uint32_t) { args.push_back({ev.ticks, depth}); }
  void on_retval(const Event& ev, const FinishedCall& c) { retvals.push_back({ev.ticks, c.start}); }
};

// A random stream of `n` records with times that mostly grow.
std::vector<Event> random_stream(std::mt19937_64& rng, size_t n) {
  std::vector<Event> out;
  uint64_t t = 1'000'000;
  auto pick = [&](uint64_t k) { return rng() % k; };
  if (pick(3) == 0) {  // a fork child's inherited frames
    for (uint64_t i = 0, m = 1 + pick(3); i < m; ++i) {
      Event e;
      e.type = Event::kInherit;
      e.ticks = t;
      e.addr = 0x400000 + 16 * pick(8);
      out.push_back(e);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    Event e;
    t += pick(10) == 0 ? 0 : 5 + pick(200);
    if (pick(50) == 0 && t > 40) t -= 30;  // a clock that stepped back
    e.ticks = t;
    const uint64_t r = pick(100);
    if (r < 46) {
      e.type = Event::kEnter;
      e.addr = 0x400000 + 16 * pick(12);  // 0x400000..0x4000b0; some are library calls
    } else if (r < 88) {
      e.type = Event::kExit;
    } else if (r < 90) {
      e.type = pick(2) ? Event::kEnter : Event::kExit;
      e.nested = true;
      e.addr = e.type == Event::kEnter ? 0x400000 + 16 * pick(12) : 0;
    } else if (r < 91) {
      e.type = Event::kUnwind;
      e.count = 1 + pick(4);
      e.reason = 1 + static_cast<uint32_t>(pick(3));
    } else if (r < 92) {
      e.type = Event::kPause;
      e.count = pick(60);
    } else if (r < 93) {
      e.type = Event::kCalib;
      e.count = (3 + pick(4)) * format::kCalibScale;
      e.addr = (9 + pick(6)) * format::kCalibScale;
    } else if (r < 94) {
      e.type = Event::kHidden;
      e.count = pick(3);
      e.addr = pick(2);
      e.capture = pick(20);
    } else if (r < 95) {
      e.type = Event::kClock;
    } else if (r < 96) {
      e.type = Event::kLost;
      e.count = 1 + pick(5);
    } else if (r < 98) {
      e.type = Event::kRetval;
      e.nested = pick(4) == 0;
    } else {
      e.type = Event::kArgs;
    }
    out.push_back(e);
  }
  if (pick(2)) {
    Event e;
    e.type = Event::kEnd;
    e.ticks = t + 10;
    out.push_back(e);
  }
  return out;
}

template <class Feed>
void walk(CallWalker<Keep>& w, const std::vector<Event>& events, Feed&& feed) {
  for (const Event& e : events) feed(w, e);
  w.finish();
}

void expect_same(const Keep& a, const Keep& b, const CallWalker<Keep>& wa,
                 const CallWalker<Keep>& wb) {
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (size_t i = 0; i < a.calls.size(); ++i) {
    const FinishedCall &x = a.calls[i], &y = b.calls[i];
    ASSERT_TRUE(x.addr == y.addr && x.start == y.start && x.end == y.end &&
                x.vstart == y.vstart && x.time == y.time && x.self == y.self &&
                x.time_lo == y.time_lo && x.time_hi == y.time_hi && x.self_lo == y.self_lo &&
                x.self_hi == y.self_hi && x.preempted == y.preempted && x.offcpu == y.offcpu &&
                x.clocked == y.clocked && x.depth == y.depth && x.slot == y.slot &&
                x.exit == y.exit && x.inherited == y.inherited)
        << "call " << i;
  }
  EXPECT_EQ(a.retvals, b.retvals);
  EXPECT_EQ(a.args, b.args);
  EXPECT_EQ(wa.unmatched_exits(), wb.unmatched_exits());
  EXPECT_EQ(wa.left_open(), wb.left_open());
  EXPECT_EQ(wa.ended_cleanly(), wb.ended_cleanly());
  EXPECT_EQ(wa.last_ticks(), wb.last_ticks());
  EXPECT_EQ(wa.preempted_ticks(), wb.preempted_ticks());
  EXPECT_EQ(wa.blocked_ticks(), wb.blocked_ticks());
}

TEST(PlainFeed, SameAsFeedOnRandomStreams) {
  std::mt19937_64 rng(2024);
  const std::vector<uint64_t> libcalls = {0x400010, 0x400050, 0x4000a0};
  for (int round = 0; round < 300; ++round) {
    const std::vector<Event> events = random_stream(rng, 50 + rng() % 3000);
    // Off-CPU intervals between the records, some preempted.
    std::vector<format::OffCpu> offcpu;
    for (size_t i = 1; i + 1 < events.size(); i += 1 + rng() % 200) {
      const uint64_t a = events[i].ticks, b = events[i + 1].ticks;
      if (b > a + 2 && (offcpu.empty() || offcpu.back().end <= a))
        offcpu.push_back({a + 1, b - 1, (rng() & 1) != 0});
    }
    Keep ka, kb;
    CallWalker<Keep> wa(ka), wb(kb);
    const int setup = round % 3;  // 0: no cost; 1: a cost; 2: a cost with library calls
    for (CallWalker<Keep>* w : {&wa, &wb}) {
      w->subtract_pauses(round % 2 == 0);
      w->set_offcpu(&offcpu);
      if (setup == 0) continue;
      WalkCost c;
      c.inner = 4.25;
      c.outer = 11.5;
      c.low = 0.9;
      c.high = 1.2;
      c.overlap_up = 0.75;
      c.overlap_down = 1.5;
      c.extra_inner = 0.125;
      c.extra_outer = 0.5;
      if (setup == 2) {
        c.libcall_extra_inner = 2.5;
        c.libcall_extra_outer = -1.75;
        w->set_libcall_functions(&libcalls);
      }
      w->set_cost(c);
    }
    walk(wa, events, [](CallWalker<Keep>& w, const Event& e) { w.feed(e); });
    walk(wb, events, [](CallWalker<Keep>& w, const Event& e) {
      if (e.type == Event::kEnter && !e.nested)
        w.feed_enter(e.ticks, e.addr);
      else if (e.type == Event::kExit && !e.nested)
        w.feed_exit(e.ticks);
      else
        w.feed(e);
    });
    SCOPED_TRACE(round);
    ASSERT_GT(ka.calls.size(), 0u);
    expect_same(ka, kb, wa, wb);
  }
}

}  // namespace
}  // namespace callmon::analysis
