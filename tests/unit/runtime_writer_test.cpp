// White-box tests of the runtime's record writer (runtime/event_writer.*): the branch-free
// word encoding, the repair when a signal's hook writes between a hook's speculative store
// and its reservation, and the PAUSE record after a write that had to grow the chunk. The
// records are decoded with the format library's reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "format/thread_reader.hpp"
#include "runtime/recording/event_writer.hpp"

namespace callmon::rt {
// The writer's only dependency outside event_writer.cpp. A test that sets g_switch_pause
// gets what thread_state.cpp's switch does on success: the reserved bytes padded, the usable
// part extended to the end of the chunk, and the time it took noted; otherwise the switch
// fails.
uint64_t g_switch_pause = 0;
uint64_t g_switch_end = 0;
bool switch_chunk(ThreadState* s, uint8_t* p, unsigned n) {
  if (!g_switch_pause) return false;
  std::memset(p, format::kPadByte, n);
  s->limit = s->real_end - kNestedMargin;
  s->pause_ticks += g_switch_pause;
  s->pause_end = g_switch_end;
  return true;
}
}  // namespace callmon::rt

namespace {

using namespace callmon;
using format::Event;

constexpr size_t kChunk = format::kMinChunkSize;

// A ThreadState writing into a zeroed buffer that stands for one chunk.
struct Chunk {
  std::vector<uint8_t> mem = std::vector<uint8_t>(kChunk, 0);
  rt::ThreadState s{};
  // Deltas in 2^shift ticks (version 7); the header written by decode() says so.
  explicit Chunk(uint32_t shift = 0) {
    s.tick_shift = shift;
    s.tick_mask = (1u << shift) - 1;
    s.chunk_base = s.cur = mem.data();
    s.chunk_size = kChunk;
    s.real_end = mem.data() + kChunk;
    s.limit = s.real_end - rt::kNestedMargin;
  }

  // Writes the chunk behind a valid header and reads every event back.
  std::vector<Event> decode() {
    // CTest runs each TEST as its own process, two at a time: a shared name would let one
    // test truncate the file another has mapped (SIGBUS in the reader, seen in CI).
    std::string path = ::testing::TempDir() + "runtime_writer_test." + std::to_string(getpid()) + ".events";
    format::ThreadFileHeader h{};
    std::memcpy(h.magic, format::kThreadMagic, sizeof h.magic);
    h.version = format::kTraceVersion;
    h.header_size = format::kHeaderSize;
    h.chunk_size = kChunk;
    h.pid = h.tid = 1;
    h.tick_shift = s.tick_shift;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(mem.data()), static_cast<std::streamsize>(mem.size()));
    out.close();
    auto r = format::ThreadReader::open(path);
    EXPECT_TRUE(r.ok()) << r.error();
    std::vector<Event> events;
    Event e;
    while (r->next(e)) events.push_back(e);
    EXPECT_EQ(r->damage().bad_records, 0u);
    std::remove(path.c_str());
    return events;
  }
};

// Makes the next depth-0 write overflow the usable part, and the switch it calls succeed
// after `pause` ticks, ending at `end` (the stub above). Undo with rt::g_switch_pause = 0.
void force_switch(rt::ThreadState& s, uint64_t pause, uint64_t end) {
  s.limit = s.cur + 1;
  rt::g_switch_pause = pause;
  rt::g_switch_end = end;
}

// events[i] is a PAUSE of `count` ticks ending at `ticks`.
void expect_pause(const std::vector<Event>& events, size_t i, uint64_t ticks, uint64_t count) {
  ASSERT_LT(i, events.size());
  EXPECT_EQ(events[i].type, Event::kPause) << "event " << i;
  EXPECT_EQ(events[i].ticks, ticks) << "event " << i;
  EXPECT_EQ(events[i].count, count) << "event " << i;
}

// The decoded events are `calls` in order: (ticks, addr) for an ENTER, (ticks, 0) for an EXIT.
void expect_calls(const std::vector<Event>& events,
                  const std::vector<std::pair<uint64_t, uint64_t>>& calls) {
  ASSERT_EQ(events.size(), calls.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].type, calls[i].second ? Event::kEnter : Event::kExit) << i;
    EXPECT_EQ(events[i].ticks, calls[i].first) << i;
    if (calls[i].second) {
      EXPECT_EQ(events[i].addr, calls[i].second) << i;
    }
  }
}

TEST(RuntimeWriter, WordEncodingMatchesByteEncoding) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = rng() >> (8 + rng() % 56);  // values of every length up to 56 bits
    unsigned n = format::leb128_size(v);
    uint8_t want[10] = {}, got[8] = {};
    ASSERT_EQ(format::leb128_put(want, v) - want, n);
    uint64_t w = rt::leb128_word(v, n);
    std::memcpy(got, &w, 8);
    ASSERT_EQ(std::memcmp(want, got, n), 0) << v;
    for (unsigned k = n; k < 8; ++k) ASSERT_EQ(got[k], 0) << "byte past the record, v=" << v;
  }
}

TEST(RuntimeWriter, EnterAndExitRoundTrip) {
  Chunk c;
  std::vector<std::pair<uint64_t, uint64_t>> calls;  // (ticks, addr)
  uint64_t t = 1000;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    uint64_t addr = 0x400000 + (rng() % 100000) * 16;
    t += rng() % (i % 3 == 0 ? 5000000 : 60);
    rt::write_enter(&c.s, t, addr);
    calls.push_back({t, addr});
    t += rng() % 40;
    rt::write_exit(&c.s, t);
    calls.push_back({t, 0});
  }
  expect_calls(c.decode(), calls);
}

// A clock that counts by 2: the hot path writes halved deltas (an EXIT 100 ticks after
// its ENTER in 1 byte instead of 2), and an odd delta (a clamped time, a wrong guess of
// the step) goes in ticks through the slow path; every time reads back exactly.
TEST(RuntimeWriter, TickShiftWritesHalvedDeltasAndOddOnesInTicks) {
  Chunk c(1);
  rt::write_enter(&c.s, 1000, 0x400000);
  uint8_t* before = c.s.cur;
  rt::write_exit(&c.s, 1100);
  EXPECT_EQ(c.s.cur - before, 1);
  before = c.s.cur;
  rt::write_enter(&c.s, 1200, 0x400000);  // cached, 100 ticks: 50 << 14 needs 3 bytes
  EXPECT_EQ(c.s.cur - before, 3);

  std::vector<std::pair<uint64_t, uint64_t>> calls = {{1000, 0x400000}, {1100, 0}, {1200, 0x400000}};
  uint64_t t = 1200;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3000; ++i) {
    uint64_t addr = 0x400000 + (rng() % 300) * 16;
    t += rng() % (i % 5 == 0 ? 100000 : 300);  // odd and even
    rt::write_enter(&c.s, t, addr);
    calls.push_back({t, addr});
    t += rng() % 200;
    rt::write_exit(&c.s, t);
    calls.push_back({t, 0});
  }
  expect_calls(c.decode(), calls);
}

// The -finstrument-functions hooks reach the out-of-line records (odd deltas, long records,
// a full window) by a plain call, the other probes through slow_call_hot (event_writer.hpp,
// Via): both write the same bytes, the window's growth and its PAUSE included.
TEST(RuntimeWriter, DirectAndSlowCallOutOfLineRecordsAreTheSame) {
  Chunk direct(1), hot(1);
  // A small usable part: the writes below fill it and grow it once.
  direct.s.limit = direct.s.chunk_base + 4096;
  hot.s.limit = hot.s.chunk_base + 4096;
  rt::g_switch_pause = 77;
  rt::g_switch_end = 5;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  std::mt19937_64 rng(5);
  uint64_t t = 1000;
  unsigned odd = 0;
  for (int i = 0; i < 3000; ++i) {
    uint64_t addr = 0x400000 + (rng() % 300) * 16;
    t += rng() % (i % 7 == 0 ? 100000 : 300);
    odd += t & 1;
    rt::write_enter<rt::Via::kDirect>(&direct.s, t, addr);
    rt::write_enter<rt::Via::kHot>(&hot.s, t, addr);
    calls.push_back({t, addr});
    t += rng() % 200;
    rt::write_exit<rt::Via::kDirect>(&direct.s, t);
    rt::write_exit<rt::Via::kHot>(&hot.s, t);
    calls.push_back({t, 0});
  }
  rt::g_switch_pause = 0;
  EXPECT_GT(odd, 100u);  // the SPECIAL records in ticks were written both ways
  EXPECT_GT(direct.s.limit, direct.s.chunk_base + 4096);  // the window grew
  ASSERT_EQ(direct.s.cur - direct.s.chunk_base, hot.s.cur - hot.s.chunk_base);
  EXPECT_EQ(std::memcmp(direct.mem.data(), hot.mem.data(), kChunk), 0);
  std::vector<Event> events;
  for (const Event& e : direct.decode())
    if (e.type == Event::kEnter || e.type == Event::kExit) events.push_back(e);
  expect_calls(events, calls);
}

// A signal arrives after a depth-0 hook stored its word but before its xadd: the nested
// hook's record must survive and both records must be read, the nested one first.
TEST(RuntimeWriter, NestedRecordBetweenStoreAndReservationSurvives) {
  Chunk c;
  rt::write_enter(&c.s, 100, 0x1000);
  uint64_t word = rt::leb128_word(10 << 1, 1);  // EXIT, dt 10 (version 6)
  uint8_t* at = rt::speculative_store(&c.s, word, 1);
  ASSERT_NE(at, nullptr);
  uint64_t nested_addr = 0x2000;
  rt::write_special(&c.s, true, format::kCodeEnter, 105, &nested_addr, 1);
  rt::write_special(&c.s, true, format::kCodeExit, 106, nullptr, 0);
  rt::commit_store(&c.s, at, word, 1);
  c.s.last_ticks = 110;  // what write_exit does after its store
  rt::write_exit(&c.s, 200);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].type, Event::kEnter);
  EXPECT_EQ(events[1].type, Event::kEnter);
  EXPECT_TRUE(events[1].nested);
  EXPECT_EQ(events[1].addr, nested_addr);
  EXPECT_EQ(events[1].ticks, 105u);
  EXPECT_EQ(events[2].type, Event::kExit);
  EXPECT_TRUE(events[2].nested);
  EXPECT_EQ(events[3].type, Event::kExit);  // the interrupted hook's record
  EXPECT_EQ(events[3].ticks, 110u);
  EXPECT_EQ(events[4].ticks, 200u);
}

// The same signal, but arriving before the speculative store: the store lands on the
// nested record's PAD prefix and must be undone.
TEST(RuntimeWriter, StoreOverNestedPadIsRepaired) {
  Chunk c;
  rt::write_enter(&c.s, 100, 0x1000);
  uint8_t* predicted = c.s.cur;
  uint64_t nested_addr = 0x3000;
  rt::write_special(&c.s, true, format::kCodeEnter, 101, &nested_addr, 1);
  // The interrupted hook had read the cursor before the signal: it stores at the old one.
  uint64_t word = rt::leb128_word(7 << 1, 1);  // EXIT, dt 7
  std::memcpy(predicted, &word, 8);
  rt::commit_store(&c.s, predicted, word, 1);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_TRUE(events[1].nested);
  EXPECT_EQ(events[1].addr, nested_addr);
  EXPECT_EQ(events[2].type, Event::kExit);
  EXPECT_EQ(events[2].ticks, 107u);
}

// A signal handler's records arriving at each step of a slow path's depth-0 record, and a
// second handler's arriving at each step of the first handler's first record (writer_test
// below). Before ThreadState::padding, the handler that came while the depth-0 writer's fill
// of PAD had read the cursor (kPadding) lost its first record's head to the rest of the fill
// once it returned: "a special record of unknown code" (stress.signals, 1 run in 7 under load).
namespace writer_test {

rt::WriterStep g_first, g_second;  // the steps at which the handlers run
bool g_nested_second;               // whether a second handler runs at all
int g_running;                      // handlers running
bool g_fired[2];

void handler_records(rt::ThreadState* s, uint64_t addr, uint64_t t) {
  rt::write_special(s, true, format::kCodeEnter, t, &addr, 1);
  rt::write_special(s, true, format::kCodeExit, t + 1, nullptr, 0);
}

void on_step(rt::ThreadState* s, rt::WriterStep step) {
  const int depth = g_running;  // 0: the depth-0 writer's step; 1: the first handler's
  if (depth > 1 || g_fired[depth] || step != (depth == 0 ? g_first : g_second) ||
      (depth == 1 && !g_nested_second))
    return;
  g_fired[depth] = true;
  ++g_running;
  handler_records(s, depth == 0 ? 0x5000 : 0x6000, depth == 0 ? 300 : 400);
  --g_running;
}

}  // namespace writer_test

TEST(RuntimeWriter, HandlerRecordsAtEveryStepOfASlowRecordSurvive) {
  using rt::WriterStep;
  namespace wt = writer_test;
  const WriterStep steps[] = {WriterStep::kPadding, WriterStep::kPadded, WriterStep::kReserved};
  for (WriterStep first : steps) {
    for (int second = -1; second < 3; ++second) {
      SCOPED_TRACE(::testing::Message() << "first handler at step " << static_cast<int>(first)
                                        << ", second at " << second);
      Chunk c(1);  // a clock counting by 2: an odd delta takes the slow path
      wt::g_first = first;
      wt::g_nested_second = second >= 0;
      wt::g_second = second >= 0 ? steps[second] : WriterStep::kPadding;
      wt::g_fired[0] = wt::g_fired[1] = false;
      // Addresses as a PIE's: the slow record (its address absolute) is longer than the PAD
      // in front of a handler's record, as in the failing recordings (10 bytes).
      const uint64_t f1 = 0x562e59fd1000, f2 = 0x562e59fd2000;
      rt::write_enter(&c.s, 100, f1);
      rt::g_writer_test_step = &wt::on_step;
      rt::write_enter(&c.s, 1001, f2);  // SPECIAL ENTER in ticks: put_depth0
      rt::g_writer_test_step = nullptr;
      EXPECT_TRUE(wt::g_fired[0]);
      EXPECT_EQ(wt::g_fired[1], second >= 0);
      EXPECT_EQ(c.s.padding, 0u);
      rt::write_exit(&c.s, 2000);
      // Expected, in the file's order: the first ENTER; the handlers' records around or
      // before the slow one as their reservations came; the EXIT.
      std::vector<std::pair<uint64_t, bool>> nested;  // (address, enter)
      auto first_handler = [&] {
        const bool inner_first = second >= 0 && steps[second] != WriterStep::kReserved;
        if (inner_first) nested.insert(nested.end(), {{0x6000, true}, {0, false}});
        nested.push_back({0x5000, true});
        if (second >= 0 && !inner_first) nested.insert(nested.end(), {{0x6000, true}, {0, false}});
        nested.push_back({0, false});
      };
      std::vector<Event> events = c.decode();
      std::vector<std::pair<uint64_t, bool>> depth0, seen;
      for (const Event& e : events) {
        ASSERT_TRUE(e.type == Event::kEnter || e.type == Event::kExit);
        (e.nested ? seen : depth0).push_back({e.addr, e.type == Event::kEnter});
      }
      first_handler();
      EXPECT_EQ(seen, nested);
      const std::vector<std::pair<uint64_t, bool>> want0 = {{f1, true}, {f2, true}, {0, false}};
      EXPECT_EQ(depth0, want0);
      // The slow record comes after the handlers' unless they came once it was reserved.
      ASSERT_EQ(events.size(), 3 + nested.size());
      const size_t slow = first == WriterStep::kReserved ? 1 : 1 + nested.size();
      EXPECT_FALSE(events[slow].nested);
      EXPECT_EQ(events[slow].addr, f2);
      EXPECT_EQ(events.back().ticks, 2000u);
    }
  }
}

// A write that had to grow the chunk is followed by a PAUSE with the time the growth took:
// after the record, since the record's time was read before the growth (the pause belongs
// to the calls open after an ENTER, the entered one included).
TEST(RuntimeWriter, GrowingTheChunkWritesAPauseAfterTheRecord) {
  Chunk c;
  rt::write_enter(&c.s, 100, 0x1000);
  force_switch(c.s, 700, 900);
  rt::write_enter(&c.s, 150, 0x2000);
  rt::write_exit(&c.s, 1000);
  rt::g_switch_pause = 0;
  EXPECT_EQ(c.s.pause_ticks, 0u);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].type, Event::kEnter);
  EXPECT_EQ(events[1].ticks, 150u);
  expect_pause(events, 2, 900, 700);
  EXPECT_EQ(events[3].type, Event::kExit);
  EXPECT_EQ(events[3].ticks, 1000u);
}

// END and EXEC close the open calls only as the last record: no PAUSE may follow them.
TEST(RuntimeWriter, NoPauseAfterEnd) {
  Chunk c;
  rt::write_enter(&c.s, 100, 0x1000);
  force_switch(c.s, 700, 900);
  rt::write_special(&c.s, false, format::kCodeEnd, 200, nullptr, 0);
  rt::g_switch_pause = 0;
  EXPECT_EQ(c.s.pause_ticks, 0u);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, Event::kEnd);
}

// --clock=tsc-fenced hooks read the clock at both ends of their work; a gap of more than
// kHookBurstTicks between the reads is the host's (or an interrupt's) and becomes a PAUSE.
struct BurstChunk : Chunk {
  format::ThreadFileHeader header{};
  BurstChunk() {
    s.header = &header;
    rt::write_enter(&s, 100, 0x1000);
  }
};

TEST(RuntimeWriter, BurstInsideAHookBecomesAPause) {
  BurstChunk c;
  rt::check_hook_burst(&c.s, 200, 200 + rt::kHookBurstTicks, c.s.covered_exit);  // not more than the limit
  rt::check_hook_burst(&c.s, 300, 300 + rt::kHookBurstTicks + 1, c.s.covered_exit);
  rt::check_hook_burst(&c.s, 9000, 100, c.s.covered_exit);  // a clock that stepped back is no burst
  auto events = c.decode();
  ASSERT_EQ(events.size(), 2u);
  expect_pause(events, 1, 300 + rt::kHookBurstTicks + 1, rt::kHookBurstTicks + 1);
  // The header counts the bursts apart from the recorder's own pauses (callmon info).
  EXPECT_EQ(c.header.burst_count, 1u);
  EXPECT_EQ(c.header.burst_ticks, rt::kHookBurstTicks + 1);
  // The gap within the limit was the hook's own work, where a burst would have been seen:
  // covered. Neither the burst nor the step back is.
  EXPECT_EQ(c.s.covered_exit, rt::kHookBurstTicks);
}

// The fenced hooks count their checked stretches apart: the ENTER's before its record's
// time, the ENTER's after it, the EXIT's after its record's; and the bursts of the first.
TEST(RuntimeWriter, FencedHooksCountCheckedTicksByStretch) {
  BurstChunk c;
  rt::write_fenced_enter(&c.s, 200, 230, 0x2000, [] { return uint64_t{270}; });
  rt::write_fenced_exit(&c.s, 300, [] { return uint64_t{350}; });
  EXPECT_EQ(c.s.covered_before, 30u);
  EXPECT_EQ(c.s.covered_after, 40u);
  EXPECT_EQ(c.s.covered_exit, 50u);
  EXPECT_EQ(c.s.burst_before, 0u);
  // A burst in one stretch leaves the others counted; only the first stretch's bursts are
  // counted apart.
  rt::write_fenced_enter(&c.s, 400, 410, 0x2000, [] { return uint64_t{9000}; });
  rt::write_fenced_enter(&c.s, 10000, 16000, 0x2000, [] { return uint64_t{16050}; });
  EXPECT_EQ(c.s.covered_before, 40u);
  EXPECT_EQ(c.s.covered_after, 90u);
  EXPECT_EQ(c.s.burst_before, 6000u);
  EXPECT_EQ(c.header.burst_count, 2u);
  EXPECT_EQ(c.header.burst_ticks, 6000u + 8590u);
  // A burst longer than the cap counts the cap towards the rate; its PAUSE is whole.
  constexpr uint64_t kLong = 70'000'000;  // 33 ms at 2.1 GHz
  rt::write_fenced_enter(&c.s, 20000, 20000 + kLong, 0x2000,
                         [] { return 20000 + kLong + 40; });
  EXPECT_EQ(c.s.burst_before, 6000u + rt::kBurstRateCapTicks);
  EXPECT_EQ(c.header.burst_ticks, 6000u + 8590u + kLong);
}

// A chunk switch inside the hook has its own PAUSE (ending at pause_end): only the time
// after it can be a burst, or the switch would be taken out twice.
TEST(RuntimeWriter, ChunkSwitchInsideAHookIsNotTakenTwice) {
  BurstChunk c;
  c.s.pause_end = 20000;
  rt::check_hook_burst(&c.s, 200, 21000, c.s.covered_exit);
  rt::check_hook_burst(&c.s, 200, 30000, c.s.covered_exit);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 2u);
  expect_pause(events, 1, 30000, 10000);
  EXPECT_EQ(c.header.burst_count, 1u);
  EXPECT_EQ(c.header.burst_ticks, 10000u);  // the switch's 20000 ticks are the recorder's
}

// A signal handler's instrumented calls inside the hook (nested records) are the program's
// time, not a burst.
TEST(RuntimeWriter, SignalHandlerInsideAHookIsNoBurst) {
  BurstChunk c;
  uint64_t addr = 0x2000;
  rt::write_special(&c.s, true, format::kCodeEnter, 300, &addr, 1);
  rt::write_special(&c.s, true, format::kCodeExit, 8000, nullptr, 0);
  rt::check_hook_burst(&c.s, 200, 9000, c.s.covered_exit);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].type, Event::kExit);
  EXPECT_EQ(c.header.burst_count, 0u);
}

// A burst's PAUSE whose write has to grow the chunk is followed at once by the growth's own
// PAUSE (not left pending until some later slow write, with a time long past).
TEST(RuntimeWriter, PauseThatGrowsTheChunkIsFollowedByItsOwn) {
  BurstChunk c;
  force_switch(c.s, 700, 9700);
  rt::check_hook_burst(&c.s, 200, 9000, c.s.covered_exit);
  rt::g_switch_pause = 0;
  EXPECT_EQ(c.s.pause_ticks, 0u);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 3u);
  expect_pause(events, 1, 9000, 8800);
  expect_pause(events, 2, 9700, 700);
}

// The fenced ENTER: a burst before its clock read is the caller's (PAUSE before the ENTER),
// one while it is written is the new call's (PAUSE after it).
TEST(RuntimeWriter, FencedEnterPutsEachBurstOnItsSide) {
  BurstChunk c;
  rt::write_fenced_enter(&c.s, 200, 5200, 0x2000, [] { return uint64_t{8200}; });
  auto events = c.decode();
  ASSERT_EQ(events.size(), 4u);
  expect_pause(events, 1, 5200, 5000);
  EXPECT_EQ(events[2].type, Event::kEnter);
  EXPECT_EQ(events[2].ticks, 5200u);
  expect_pause(events, 3, 8200, 3000);
  EXPECT_EQ(c.header.burst_count, 2u);
  EXPECT_EQ(c.header.burst_ticks, 8000u);
}

// The fenced EXIT: a burst while it is written is the caller's, a PAUSE after it.
TEST(RuntimeWriter, FencedExitBurstComesAfterIt) {
  BurstChunk c;
  rt::write_fenced_exit(&c.s, 500, [] { return uint64_t{600}; });  // the hook's own work
  rt::write_enter(&c.s, 700, 0x1000);
  rt::write_fenced_exit(&c.s, 800, [] { return uint64_t{2800}; });
  auto events = c.decode();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[3].type, Event::kExit);
  expect_pause(events, 4, 2800, 2000);
}

// The -finstrument-functions exit checks for a burst after its guard is released
// (cyg_hooks.S): a signal handler's calls written since then make the gap theirs.
TEST(RuntimeWriter, ExitBurstAfterTheGuardOnlyWithNothingWrittenSince) {
  BurstChunk c;
  rt::write_exit(&c.s, 500);
  rt::write_exit_burst_pause(&c.s, 500, 3000);
  rt::write_enter(&c.s, 3100, 0x1000);
  rt::write_exit(&c.s, 3200);
  rt::write_enter(&c.s, 3300, 0x2000);  // a handler's call, after the hook's guard
  rt::write_exit(&c.s, 3400);
  rt::write_exit_burst_pause(&c.s, 3200, 9000);
  auto events = c.decode();
  ASSERT_EQ(events.size(), 7u);
  expect_pause(events, 2, 3000, 2500);
  EXPECT_EQ(events[6].type, Event::kExit);
}

// A popped frame's slot keeps no stack address: the next push publishes the slot before it
// fills it, and a signal's exit hook looking below its own frame for frames that share its
// slot (hooks_pg.cpp, pg_exit_slow) must not find the last occupant's there. (It did: the
// -pg signal storm stopped on "a hijacked return address is missing from the shadow stack".)
TEST(RuntimeWriter, PoppedFramesLeaveNoStackAddressBehind) {
  rt::Frame stack[4]{};
  rt::ThreadState s{};
  s.stack_base = s.top = stack;
  s.stack_limit = stack + 4;
  rt::push_frame(&s, 0x10, 1000, 0x1);
  rt::push_frame(&s, 0x20, 900, 0x2);
  rt::Frame* f = rt::push_frame(&s, 0x30, 800, 0x3);
  EXPECT_EQ(f, stack + 2);
  EXPECT_EQ(s.top, stack + 3);
  EXPECT_EQ(f->fn, 0x30u);
  EXPECT_EQ(f->sp, 800u);
  EXPECT_EQ(f->ret, 0x3u);
  rt::pop_frames(&s, stack + 1);  // an unwind through two frames
  EXPECT_EQ(s.top, stack + 1);
  EXPECT_EQ(stack[1].sp, 0u);
  EXPECT_EQ(stack[2].sp, 0u);
  EXPECT_EQ(stack[0].sp, 1000u);
  rt::pop_frame(&s, stack);
  EXPECT_EQ(s.top, stack);
  EXPECT_EQ(stack[0].sp, 0u);
}

// The calibration's scratch state (no file header) never gets a PAUSE: its decoder reads
// ENTER and EXIT records only.
TEST(RuntimeWriter, NoBurstPauseWithoutAFile) {
  Chunk c;
  rt::write_enter(&c.s, 100, 0x1000);
  rt::check_hook_burst(&c.s, 200, 90000, c.s.covered_exit);
  EXPECT_EQ(c.decode().size(), 1u);
}

}  // namespace
