// Version 6 ENTER and EXIT records (callmon/format/records.hpp, docs/format.md "Version 6"):
// ThreadWriter -> ThreadReader round trips of every form across many chunks, the same
// calls written as version 5 read back the same, the exact size of a fixed call pattern,
// and hand-made records of each form.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "format/thread_reader.hpp"
#include "format/trace_writer.hpp"

namespace callmon::format {
namespace {

namespace fs = std::filesystem;

class CompactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_compact_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

// One record of a test stream: an ENTER (addr != 0), an EXIT, or a nested ENTER/EXIT pair.
struct Step {
  uint64_t ticks;
  uint64_t addr;  // 0: EXIT
  bool nested = false;
};

void write(const std::string& p, const std::vector<Step>& steps, uint16_t version,
           uint32_t chunk = kMinChunkSize, uint32_t tick_shift = 0) {
  auto w = ThreadWriter::create(p, 1, 1, "1.0", chunk, ClockKind::kTsc, version);
  ASSERT_TRUE(w) << w.error();
  w->set_tick_shift(tick_shift);
  for (const Step& s : steps) {
    if (s.nested) {
      w->nested_enter(s.ticks, s.addr);
      w->nested_exit(s.ticks + 1);
    } else if (s.addr) {
      w->enter(s.ticks, s.addr);
    } else {
      w->exit(s.ticks);
    }
  }
  ASSERT_TRUE(w->close(true).ok());
}

struct Read {
  std::vector<Event> events;
  uint64_t bytes = 0;
  uint16_t version = 0;
  uint64_t bad = 0;
};

Read read(const std::string& p) {
  Read out;
  auto r = ThreadReader::open(p);
  EXPECT_TRUE(r) << r.error();
  if (!r) return out;
  Event e;
  while (r->next(e)) out.events.push_back(e);
  out.bytes = r->bytes_read();
  out.version = r->header().version;
  out.bad = r->damage().bad_records;
  return out;
}

// A stream like a program's: calls into a working set of functions (so that guesses,
// cached and new addresses all occur), nested calls, time steps of every length including
// 0 and the first record's absolute time, and a few signal-time nested records.
std::vector<Step> program_like(size_t calls, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> fns;
  for (int i = 0; i < 3000; ++i) fns.push_back(0x400000 + (rng() % 200000) * 16 + (i % 7 == 0 ? 3 : 0));
  std::vector<Step> out;
  uint64_t t = uint64_t{1} << 52;  // a machine up for weeks: the absolute time is large
  size_t depth = 0;
  std::vector<uint64_t> pattern = {fns[1], fns[2], fns[3], fns[1]};
  for (size_t i = 0; i < calls; ++i) {
    auto step = [&] {
      uint64_t r = rng() % 100;
      return r < 5 ? 0 : r < 90 ? 20 + rng() % 100 : r < 99 ? rng() % 100000 : rng() % (uint64_t{1} << 40);
    };
    while (depth > 0 && rng() % 3 == 0) {
      t += step();
      out.push_back({t, 0});
      --depth;
    }
    t += step();
    uint64_t r = rng() % 10;
    uint64_t fn = r < 5 ? pattern[i % pattern.size()] : r < 9 ? fns[rng() % 40] : fns[rng() % fns.size()];
    out.push_back({t, fn});
    ++depth;
    if (rng() % 500 == 0) {
      out.push_back({t + 1, fns[rng() % 40], true});
      t += 2;
    }
  }
  while (depth-- > 0) out.push_back({t += 7, 0});
  return out;
}

std::vector<Event> expected(const std::vector<Step>& steps) {
  std::vector<Event> out;
  for (const Step& s : steps) {
    Event e;
    e.ticks = s.ticks;
    e.addr = s.addr;
    e.type = s.addr ? Event::kEnter : Event::kExit;
    e.nested = s.nested;
    out.push_back(e);
    if (s.nested) {
      e.ticks = s.ticks + 1;
      e.addr = 0;
      e.type = Event::kExit;
      out.push_back(e);
    }
  }
  return out;
}

void expect_events(const std::vector<Event>& got, const std::vector<Event>& want) {
  ASSERT_GE(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].type, want[i].type) << "event " << i;
    ASSERT_EQ(got[i].nested, want[i].nested) << "event " << i;
    ASSERT_EQ(got[i].ticks, want[i].ticks) << "event " << i;
    ASSERT_EQ(got[i].addr, want[i].addr) << "event " << i;
  }
}

TEST_F(CompactTest, EveryFormRoundTripsAcrossManyChunks) {
  std::vector<Step> steps = program_like(200000, 1);
  write(path("v6.events"), steps, kTraceVersion);
  Read got = read(path("v6.events"));
  EXPECT_EQ(got.version, kTraceVersion);
  EXPECT_EQ(got.bad, 0u);
  expect_events(got.events, expected(steps));
}

TEST_F(CompactTest, VersionFiveOfTheSameCallsReadsTheSame) {
  std::vector<Step> steps = program_like(50000, 2);
  write(path("v5.events"), steps, 5);
  write(path("v6.events"), steps, kTraceVersion);
  Read v5 = read(path("v5.events")), v6 = read(path("v6.events"));
  EXPECT_EQ(v5.version, 5);
  ASSERT_EQ(v5.events.size(), v6.events.size());
  expect_events(v6.events, v5.events);
  EXPECT_LT(v6.bytes, v5.bytes);
}

// Two leaves called in turn, every step 40 ticks: the first two ENTERs are new addresses
// (V 40<<3|5: 2 bytes, deltas 0x1000 and 0x40: 2 bytes each), the third is cached (V
// 40<<14|slot<<4|9: 3 bytes), every later one is the guessed next callee (V 40<<4|1: 2
// bytes), and every EXIT takes 1 byte (V 80). Version 5 took 5 or 6 bytes per call.
TEST_F(CompactTest, AlternatingLeavesCostThreeBytesPerCall) {
  constexpr uint64_t kA = 0x1000, kB = 0x1040;
  constexpr int kRounds = 1000;
  std::vector<Step> steps;
  uint64_t t = 0;
  for (int i = 0; i < kRounds; ++i) {
    steps.push_back({t += 40, kA});
    steps.push_back({t += 40, 0});
    steps.push_back({t += 40, kB});
    steps.push_back({t += 40, 0});
  }
  write(path("alt.events"), steps, kTraceVersion);
  Read got = read(path("alt.events"));
  expect_events(got.events, expected(steps));
  EXPECT_EQ(got.bytes, (4 + 1) + (4 + 1) + (3 + 1) + (2 * kRounds - 3) * 3);
}

// Version 7: a clock that counts by 2 (every time even, as a VM's scaled TSC) has its
// deltas written halved. The calls of AlternatingLeavesCostThreeBytesPerCall 80 ticks apart
// take the bytes they took 40 ticks apart with no shift (an EXIT of 80 ticks: 1 byte, not
// 2); the odd steps of program_like are written in ticks and every time reads back.
TEST_F(CompactTest, TickShiftHalvesDeltasOfAnEvenClock) {
  constexpr uint64_t kA = 0x1000, kB = 0x1040;
  constexpr int kRounds = 1000;
  std::vector<Step> steps;
  uint64_t t = 0;
  for (int i = 0; i < kRounds; ++i) {
    steps.push_back({t += 80, kA});
    steps.push_back({t += 80, 0});
    steps.push_back({t += 80, kB});
    steps.push_back({t += 80, 0});
  }
  write(path("even.events"), steps, kTraceVersion, kMinChunkSize, 1);
  write(path("even0.events"), steps, kTraceVersion, kMinChunkSize, 0);
  Read got = read(path("even.events")), plain = read(path("even0.events"));
  expect_events(got.events, expected(steps));
  EXPECT_EQ(got.bytes, (4 + 1) + (4 + 1) + (3 + 1) + (2 * kRounds - 3) * 3);
  EXPECT_EQ(plain.bytes, (4 + 2) + (4 + 2) + (3 + 2) + (2 * kRounds - 3) * 4);

  std::vector<Step> mixed = program_like(100000, 3);  // odd and even steps
  write(path("mixed.events"), mixed, kTraceVersion, kMinChunkSize, 2);
  Read m = read(path("mixed.events"));
  EXPECT_EQ(m.bad, 0u);
  expect_events(m.events, expected(mixed));
}

// Version 6 files had reserved bytes where version 7 keeps tick_shift: whatever they hold,
// a version 6 file's deltas are ticks.
TEST_F(CompactTest, VersionSixIgnoresTheTickShiftField) {
  std::vector<Step> steps = {{100, 0x20}, {140, 0}};
  ThreadFileHeader h{};
  std::memcpy(h.magic, kThreadMagic, 8);
  h.version = 6;
  h.header_size = kHeaderSize;
  h.chunk_size = kMinChunkSize;
  h.pid = h.tid = 3;
  h.tick_shift = 3;
  std::vector<uint8_t> bytes = {uint8_t(0x80 | ((100 << 3 | 5) & 0x7f)), uint8_t((100 << 3 | 5) >> 7),
                                0x40, 40 << 1};
  std::string p = path("v6shift.events");
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    bytes.resize(kMinChunkSize, 0);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  Read got = read(p);
  expect_events(got.events, expected(steps));
  h.version = 7;
  {
    std::fstream out(p, std::ios::binary | std::ios::in | std::ios::out);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
  }
  Read shifted = read(p);
  expect_events(shifted.events, expected({{800, 0x20}, {1120, 0}}));
}

// Hand-made records of each form, and the two-byte EXIT of no time.
TEST_F(CompactTest, HandMadeRecordsOfEachForm) {
  // new 0x20 at 10; exit +0; cached slot(0x20) at +3; guessed: next[slot(0x20)] was set
  // to 0x20 by the cached ENTER (after 0x20 came 0x20), +5; exit +1.
  const uint8_t slot = static_cast<uint8_t>(addr_slot(0x20));  // 2
  std::vector<uint8_t> bytes = {
      10 << 3 | 5, 0x40,                                      // ENTER new, zigzag(0x20)
      0x80, 0x00,                                             // EXIT, dt 0
  };
  uint8_t buf[16];
  uint8_t* e = leb128_put(buf, uint64_t{3} << kV6CachedShift | uint64_t{slot} << 4 | kV6CachedTag);
  bytes.insert(bytes.end(), buf, e);
  bytes.push_back(5 << 4 | 1);  // ENTER guessed
  bytes.push_back(1 << 1);      // EXIT, dt 1
  ThreadFileHeader h{};
  std::memcpy(h.magic, kThreadMagic, 8);
  h.version = kTraceVersion;
  h.header_size = kHeaderSize;
  h.chunk_size = kMinChunkSize;
  h.pid = h.tid = 3;
  std::string p = path("raw.events");
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    bytes.resize(kMinChunkSize, 0);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  Read got = read(p);
  ASSERT_EQ(got.events.size(), 5u);
  std::vector<Step> want = {{10, 0x20}, {10, 0}, {13, 0x20}, {18, 0x20}, {19, 0}};
  expect_events(got.events, expected(want));
}

// The encoders' choice: guess first, then cache, then a new address; a time too long for a
// form's shift falls to the next form.
TEST(CompactEncoding, FormsAreChosenInOrder) {
  AddrTables t;
  t.clear();
  uint64_t last = 0;
  EnterV6 e = choose_enter_v6(t, last, 0x5000, 7);
  EXPECT_TRUE(e.has_delta);
  EXPECT_EQ(e.v & 7, kV6NewTag);
  note_enter_v6(t, last, 0x5000);
  // Nothing has followed 0x5000 yet (no guess), but the cache holds it.
  e = choose_enter_v6(t, last, 0x5000, 7);
  EXPECT_EQ(e.v & 15, kV6CachedTag);
  EXPECT_EQ(e.v >> kV6CachedShift, 7u);
  note_enter_v6(t, last, 0x5000);  // now next[slot(0x5000)] = 0x5000
  e = choose_enter_v6(t, last, 0x5000, 7);
  EXPECT_EQ(e.v, uint64_t{7} << kV6GuessedShift | kV6GuessedTag);
  // A cached address whose time does not fit the cached form's shift: a new one.
  note_enter_v6(t, last, 0x9000);
  e = choose_enter_v6(t, last, 0x5000, uint64_t{1} << 55);
  EXPECT_TRUE(e.has_delta);
  EXPECT_EQ(e.v >> kV6NewShift, uint64_t{1} << 55);
  uint8_t buf[4];
  EXPECT_EQ(put_exit_v6(buf, 0) - buf, 2);
  EXPECT_EQ(buf[0], 0x80);
  EXPECT_EQ(exit_v6_size(0), 2u);
  EXPECT_EQ(exit_v6_size(63), 1u);
  EXPECT_EQ(exit_v6_size(64), 2u);
}

}  // namespace
}  // namespace callmon::format
