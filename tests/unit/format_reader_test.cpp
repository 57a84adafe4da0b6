// Thread event files: ThreadWriter -> ThreadReader round trips (every record kind, many
// chunks, nested records), and the reader's behaviour on truncated, corrupt and invalid
// files.
#include <gtest/gtest.h>
#include <sys/stat.h>
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

class ThreadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_reader_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

bool same(const Event& a, const Event& b) {
  return a.type == b.type && a.nested == b.nested && a.reason == b.reason &&
         a.ticks == b.ticks && a.addr == b.addr && a.count == b.count;
}

std::string show(const Event& e) {
  return "type=" + std::to_string(e.type) + " nested=" + std::to_string(e.nested) +
         " ticks=" + std::to_string(e.ticks) + " addr=" + std::to_string(e.addr) +
         " count=" + std::to_string(e.count) + " reason=" + std::to_string(e.reason);
}

Event ev(Event::Type type, uint64_t ticks, uint64_t addr = 0, uint64_t count = 0,
         uint32_t reason = 0, bool nested = false) {
  Event e;
  e.type = type;
  e.ticks = ticks;
  e.addr = addr;
  e.count = count;
  e.reason = reason;
  e.nested = nested;
  return e;
}

std::vector<Event> read_all(ThreadReader& r) {
  std::vector<Event> out;
  Event e;
  while (r.next(e)) out.push_back(e);
  return out;
}

void expect_events(const std::vector<Event>& got, const std::vector<Event>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(same(got[i], want[i])) << "event " << i << ": got " << show(got[i])
                                       << ", want " << show(want[i]);
}

// Writes `calls` calls (enter+exit pairs, some nested) with varied deltas and addresses;
// returns the events a reader must yield.
std::vector<Event> write_calls(ThreadWriter& w, size_t calls, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Event> want;
  uint64_t t = 1'000'000'000'000ull;
  std::vector<uint64_t> stack;
  for (size_t i = 0; i < calls; ++i) {
    if (stack.size() < 3 || (stack.size() < 200 && rng() % 2)) {
      t += rng() % 5000;
      uint64_t addr = 0x400000 + (rng() % 4096) * 16;
      w.enter(t, addr);
      want.push_back(ev(Event::kEnter, t, addr));
      stack.push_back(addr);
    } else {
      t += rng() % 5000;
      w.exit(t);
      want.push_back(ev(Event::kExit, t));
      stack.pop_back();
    }
  }
  while (!stack.empty()) {
    t += 7;
    w.exit(t);
    want.push_back(ev(Event::kExit, t));
    stack.pop_back();
  }
  return want;
}

TEST_F(ThreadFileTest, RoundTripsEveryRecordKind) {
  auto w = ThreadWriter::create(path("1.0.1.events"), 1, 7, "1.0");
  ASSERT_TRUE(w) << w.error();
  w->sync(90, 123456789);
  w->enter(100, 0x401000);
  w->enter(150, 0x400010);  // a lower address: negative delta
  w->nested_enter(160, 0x7f0000001000);
  w->nested_exit(170);
  w->exit(200);
  w->unwind(210, 1, UnwindReason::kException);
  w->fork(220, 4250);
  w->lost(230, 5);
  w->inherit(240, {0x401000, 0x401100, 0x401200});
  w->exec(250);
  w->end(260);
  w->set_thread_name("worker");
  ASSERT_TRUE(w->close(true));

  auto r = ThreadReader::open(path("1.0.1.events"));
  ASSERT_TRUE(r) << r.error();
  const ThreadFileHeader& h = r->header();
  EXPECT_EQ(h.pid, 1u);
  EXPECT_EQ(h.tid, 7u);
  EXPECT_STREQ(h.process_key, "1.0");
  EXPECT_STREQ(h.thread_name, "worker");
  EXPECT_EQ(h.chunk_size, kMinChunkSize);
  EXPECT_EQ(h.flags, kFlagFinished | kFlagForkChild);
  EXPECT_EQ(h.lost_events, 5u);
  EXPECT_EQ(h.start_ticks, 90u);
  EXPECT_GT(h.end_offset, kHeaderSize);
  EXPECT_EQ(h.committed_end, h.end_offset);
  EXPECT_EQ(r->file_size(), kHeaderSize + kMinChunkSize);

  std::vector<Event> want = {
      ev(Event::kSync, 90, 0, 123456789),
      ev(Event::kEnter, 100, 0x401000),
      ev(Event::kEnter, 150, 0x400010),
      ev(Event::kEnter, 160, 0x7f0000001000, 0, 0, true),
      ev(Event::kExit, 170, 0, 0, 0, true),
      ev(Event::kExit, 200),
      ev(Event::kUnwind, 210, 0, 1, 1),
      ev(Event::kFork, 220, 0, 4250),
      ev(Event::kLost, 230, 0, 5),
      ev(Event::kInherit, 240, 0x401000),
      ev(Event::kInherit, 240, 0x401100),
      ev(Event::kInherit, 240, 0x401200),
      ev(Event::kExec, 250),
      ev(Event::kEnd, 260),
  };
  expect_events(read_all(*r), want);
  EXPECT_EQ(r->damage().bad_records, 0u);
  EXPECT_EQ(r->damage().bytes_missing, 0u);
  EXPECT_TRUE(r->damage().notes.empty());
  EXPECT_EQ(r->bytes_read(), h.end_offset - kHeaderSize);
  Event e;
  EXPECT_FALSE(r->next(e));  // stays at the end
}

TEST_F(ThreadFileTest, EmptyStream) {
  auto w = ThreadWriter::create(path("e.events"), 1, 1, "1.0");
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->close(false));
  auto r = ThreadReader::open(path("e.events"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->header().flags, 0u);
  EXPECT_TRUE(read_all(*r).empty());
  EXPECT_TRUE(r->damage().notes.empty());
}

TEST_F(ThreadFileTest, ManyChunksRoundTrip) {
  auto w = ThreadWriter::create(path("big.events"), 2, 2, "2.0", kMinChunkSize);
  ASSERT_TRUE(w);
  std::vector<Event> want = write_calls(*w, 300'000, 42);
  w->end(want.back().ticks + 1);
  want.push_back(ev(Event::kEnd, want.back().ticks + 1));
  ASSERT_TRUE(w->close(true));

  auto r = ThreadReader::open(path("big.events"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_GT(r->file_size(), kHeaderSize + 5ull * kMinChunkSize);
  EXPECT_EQ((r->file_size() - kHeaderSize) % kMinChunkSize, 0u);
  expect_events(read_all(*r), want);
  EXPECT_TRUE(r->damage().notes.empty());
  EXPECT_EQ(r->damage().bad_records, 0u);
}

// A chunk decodes from its own beginning: reading chunks [0, k) and [k, n) with two
// readers yields the whole read's records, for every cut (a split walk's premise).
TEST_F(ThreadFileTest, ChunkRangesReadAsTheWhole) {
  auto w = ThreadWriter::create(path("parts.events"), 2, 2, "2.0", kMinChunkSize);
  ASSERT_TRUE(w);
  std::vector<Event> want = write_calls(*w, 120'000, 7);
  w->end(want.back().ticks + 1);
  ASSERT_TRUE(w->close(true));
  auto whole = ThreadReader::open(path("parts.events"));
  ASSERT_TRUE(whole) << whole.error();
  const std::vector<Event> all = read_all(*whole);
  const uint64_t chunks = whole->chunk_count();
  ASSERT_GE(chunks, 4u);
  for (uint64_t cut = 0; cut <= chunks; ++cut) {
    auto a = ThreadReader::open(path("parts.events"));
    auto b = ThreadReader::open(path("parts.events"));
    ASSERT_TRUE(a && b);
    a->restrict_chunks(0, cut);
    b->restrict_chunks(cut, UINT64_MAX);
    std::vector<Event> got = read_all(*a);
    const size_t first_part = got.size();
    for (const Event& e : read_all(*b)) got.push_back(e);
    SCOPED_TRACE("cut at chunk " + std::to_string(cut));
    expect_events(got, all);
    // Each part holds records unless it has no chunk.
    EXPECT_EQ(first_part == 0, cut == 0);
    EXPECT_EQ(first_part == all.size(), cut == chunks);
  }
}

// The time clamp is the part's own: a chunk whose first record steps back below the chunk
// before keeps its time when read from there, and is clamped in a whole read.
TEST_F(ThreadFileTest, ChunkRangeClampsTimeOnlyAgainstItsOwnRecords) {
  auto w = ThreadWriter::create(path("back.events"), 2, 2, "2.0", kMinChunkSize);
  ASSERT_TRUE(w);
  uint64_t t = 1000;
  for (size_t n = 0; n < 1000; ++n) w->enter(t += 10, 0x400000 + (n % 64) * 16);
  const uint64_t late = t;
  // Then time steps back and stays there over several chunks: within a chunk the writer
  // writes no time (a delta of 0), a chunk's first record its absolute time.
  for (size_t i = 0; i < 100'000; ++i) w->exit(late - 5000);
  ASSERT_TRUE(w->close(true));
  auto whole = ThreadReader::open(path("back.events"));
  ASSERT_TRUE(whole);
  const uint64_t chunks = whole->chunk_count();
  ASSERT_GE(chunks, 3u);
  const std::vector<Event> all = read_all(*whole);
  auto part = ThreadReader::open(path("back.events"));
  ASSERT_TRUE(part);
  part->restrict_chunks(chunks - 1, UINT64_MAX);
  const std::vector<Event> tail = read_all(*part);
  ASSERT_FALSE(tail.empty());
  ASSERT_LT(tail.size(), all.size());
  const Event& in_whole = all[all.size() - tail.size()];
  EXPECT_EQ(in_whole.type, Event::kExit);
  EXPECT_EQ(tail.front().type, Event::kExit);
  EXPECT_EQ(in_whole.ticks, late);             // clamped against the chunks before
  EXPECT_EQ(tail.front().ticks, late - 5000);  // the part's first time, as written
}

TEST_F(ThreadFileTest, NestedRecordsKeepStateAndTimeIsClamped) {
  auto w = ThreadWriter::create(path("n.events"), 1, 1, "1.0");
  ASSERT_TRUE(w);
  w->enter(1000, 0x5000);
  // A signal arrives inside the runtime: the nested hook read a later clock.
  w->nested_enter(1500, 0x9000);
  w->nested_exit(1600);
  w->enter(1200, 0x5010);  // the interrupted hook's own time: before the nested ones
  w->exit(1700);
  w->exit(1800);
  ASSERT_TRUE(w->close(true));

  auto r = ThreadReader::open(path("n.events"));
  ASSERT_TRUE(r);
  std::vector<Event> want = {
      ev(Event::kEnter, 1000, 0x5000),
      ev(Event::kEnter, 1500, 0x9000, 0, 0, true),
      ev(Event::kExit, 1600, 0, 0, 0, true),
      ev(Event::kEnter, 1600, 0x5010),  // 1200 clamped to the previous event's time
      ev(Event::kExit, 1700),
      ev(Event::kExit, 1800),
  };
  expect_events(read_all(*r), want);
}

TEST_F(ThreadFileTest, LongInheritSpansRecordsAndChunks) {
  auto w = ThreadWriter::create(path("i.events"), 1, 1, "1.0");
  ASSERT_TRUE(w);
  std::vector<Event> want = write_calls(*w, 13'000, 3);  // most of the first chunk
  std::vector<uint64_t> frames;
  for (uint64_t i = 0; i < 5000; ++i) frames.push_back(0x7f0000000000 + i * 0x40);
  uint64_t t = want.back().ticks + 10;
  w->inherit(t, frames);
  for (uint64_t a : frames) want.push_back(ev(Event::kInherit, t, a));
  w->enter(t + 5, 0x1234);
  want.push_back(ev(Event::kEnter, t + 5, 0x1234));
  ASSERT_TRUE(w->close(true));
  auto r = ThreadReader::open(path("i.events"));
  ASSERT_TRUE(r);
  EXPECT_GT(r->file_size(), kHeaderSize + kMinChunkSize);
  expect_events(read_all(*r), want);
}

// ---- damaged files -------------------------------------------------------------------

class DamagedFileTest : public ThreadFileTest {
 protected:
  void SetUp() override {
    ThreadFileTest::SetUp();
    auto w = ThreadWriter::create(path("good.events"), 3, 3, "3.0", kMinChunkSize);
    ASSERT_TRUE(w);
    want_ = write_calls(*w, 120'000, 7);
    ASSERT_TRUE(w->close(true));
    auto r = ThreadReader::open(path("good.events"));
    ASSERT_TRUE(r);
    end_ = r->header().end_offset;
    chunks_ = (r->file_size() - kHeaderSize) / kMinChunkSize;
    ASSERT_GE(chunks_, 4u);
  }

  std::string copy(const std::string& name) {
    fs::copy_file(path("good.events"), path(name), fs::copy_options::overwrite_existing);
    return path(name);
  }

  void poke(const std::string& file, uint64_t offset, const std::vector<uint8_t>& bytes) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  }

  uint64_t chunk_offset(uint64_t i) const { return kHeaderSize + i * kMinChunkSize; }

  std::vector<Event> want_;
  uint64_t end_ = 0;
  uint64_t chunks_ = 0;
};

TEST_F(DamagedFileTest, TruncatedFilesReadUpToTheCut) {
  const uint64_t cuts[] = {kHeaderSize, kHeaderSize + 1, kHeaderSize + 777,
                           chunk_offset(1), chunk_offset(1) + 3, chunk_offset(2) + 12345,
                           end_ - 1, end_, chunk_offset(chunks_) - 100};
  for (uint64_t cut : cuts) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::string f = copy("cut.events");
    fs::resize_file(f, cut);
    auto r = ThreadReader::open(f);
    ASSERT_TRUE(r) << r.error();
    std::vector<Event> got = read_all(*r);
    ASSERT_LE(got.size(), want_.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(same(got[i], want_[i])) << i;
    const ReadDamage& d = r->damage();
    EXPECT_EQ(d.bad_records, 0u);
    if (cut < end_) {
      EXPECT_LT(got.size(), want_.size());
      EXPECT_EQ(d.bytes_missing, end_ - cut);
      ASSERT_FALSE(d.notes.empty());
      EXPECT_EQ(d.notes[0].find("file ends at byte " + std::to_string(cut)), 0u) << d.notes[0];
      EXPECT_NE(d.notes[0].find("were lost"), std::string::npos);
      if (got.size() > 1000) {
        EXPECT_NE(d.notes[0].find("this file's"), std::string::npos) << d.notes[0];
      }
    } else {
      EXPECT_EQ(got.size(), want_.size());
      EXPECT_EQ(d.bytes_missing, 0u);
      // A last chunk shorter than chunk_size that holds all the data is how the runtime
      // grows files (window by window): not damage.
      EXPECT_TRUE(d.notes.empty()) << d.notes[0];
    }
  }
}

TEST_F(DamagedFileTest, TooLongValueAbandonsOnlyItsChunk) {
  std::string f = copy("bad.events");
  poke(f, chunk_offset(1) + 5000, std::vector<uint8_t>(12, 0xff));
  auto r = ThreadReader::open(f);
  ASSERT_TRUE(r);
  std::vector<Event> got = read_all(*r);
  EXPECT_EQ(r->damage().bad_records, 1u);
  ASSERT_EQ(r->damage().notes.size(), 1u);
  EXPECT_NE(r->damage().notes[0].find("chunk 1"), std::string::npos) << r->damage().notes[0];
  // The events read are a prefix of the original, then (after the abandoned rest of
  // chunk 1) an exact suffix of it: chunks 2.. decode normally.
  size_t k = 0;
  while (k < got.size() && same(got[k], want_[k])) ++k;
  ASSERT_LT(k, want_.size());
  size_t rest = got.size() - k;
  ASSERT_GT(rest, 10'000u);
  for (size_t i = 0; i < rest; ++i)
    ASSERT_TRUE(same(got[k + i], want_[want_.size() - rest + i])) << i;
  // Ticks stay non-decreasing across the gap.
  for (size_t i = 1; i < got.size(); ++i) ASSERT_GE(got[i].ticks, got[i - 1].ticks);
}

// (Version 6 gives every head a meaning but SPECIAL codes past the last: version 5's unknown
// kind 0 is an EXIT now.)
TEST_F(DamagedFileTest, UnknownRecordAtChunkStartSkipsTheWholeChunk) {
  std::string f = copy("bad.events");
  poke(f, chunk_offset(2), {0xFB, 0x01});  // V = 251: SPECIAL of code 31
  auto r = ThreadReader::open(f);
  ASSERT_TRUE(r);
  std::vector<Event> got = read_all(*r);
  EXPECT_EQ(r->damage().bad_records, 1u);
  EXPECT_LT(got.size(), want_.size());
  EXPECT_TRUE(same(got.back(), want_.back()));
}

TEST_F(DamagedFileTest, ZeroChunkEndsTheStream) {
  std::string f = copy("zero.events");
  poke(f, chunk_offset(1), std::vector<uint8_t>(kMinChunkSize, 0));
  auto r = ThreadReader::open(f);
  ASSERT_TRUE(r);
  std::vector<Event> got = read_all(*r);
  ASSERT_FALSE(got.empty());
  ASSERT_LT(got.size(), want_.size() / 2);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(same(got[i], want_[i]));
  EXPECT_EQ(r->damage().bad_records, 0u);
}

// ---- hand-made chunks ------------------------------------------------------------------

class RawFileTest : public ThreadFileTest {
 protected:
  // Writes a valid header followed by `chunks`, each zero padded to kMinChunkSize. The
  // hand-made records below are in the encoding of versions 1 to 5 (ENTER kind 1, EXIT kind
  // 2): the header says version 5 unless `patch` changes it (format_compact_test.cpp
  // has version 6's).
  std::string write_raw(const std::vector<std::vector<uint8_t>>& chunks,
                        void (*patch)(ThreadFileHeader&) = nullptr) {
    ThreadFileHeader h{};
    std::memcpy(h.magic, kThreadMagic, 8);
    h.version = 5;
    h.header_size = kHeaderSize;
    h.chunk_size = kMinChunkSize;
    h.pid = h.tid = 9;
    if (patch) patch(h);
    std::string p = path("raw.events");
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (auto c : chunks) {
      c.resize(kMinChunkSize, 0);
      out.write(reinterpret_cast<const char*>(c.data()), static_cast<std::streamsize>(c.size()));
    }
    return p;
  }

  // Reads the raw file; returns the events and the damage.
  std::vector<Event> read_raw(const std::string& p, ReadDamage* damage = nullptr) {
    auto r = ThreadReader::open(p);
    EXPECT_TRUE(r) << r.error();
    if (!r) return {};
    std::vector<Event> got = read_all(*r);
    if (damage) *damage = r->damage();
    return got;
  }
};

// ENTER at ticks 10, addr 0x20 with state reset: V = 10<<2|1 = 41, zigzag(0x20) = 0x40.
const std::vector<uint8_t> kEnter10 = {41, 0x40};
const std::vector<uint8_t> kExit5 = {5 << 2 | 2};

std::vector<uint8_t> cat(std::vector<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST_F(RawFileTest, StateResetsAtEveryChunk) {
  std::string p = write_raw({cat({kEnter10, kExit5}), cat({kEnter10, kExit5})});
  std::vector<Event> got = read_raw(p);
  // The second chunk's times are absolute again; clamping keeps them non-decreasing.
  expect_events(got, {ev(Event::kEnter, 10, 0x20), ev(Event::kExit, 15),
                      ev(Event::kEnter, 15, 0x20), ev(Event::kExit, 15)});
}

TEST_F(RawFileTest, BadSpecialRecordsAbandonTheirChunk) {
  const std::vector<std::vector<uint8_t>> bad = {
      {uint8_t(special_head(kCodeUnwind, false)), 1, 1, 9},              // reason 9
      {uint8_t(special_head(kCodeUnwind, false)), 1, 0x80, 0x80, 0x80, 0x08, 1},  // 16M
      {uint8_t(special_head(kCodeInherit, false)), 1, 0x80, 0x80, 0x80, 0x08},    // 16M
      {0xfb, 0x01, 1},                                                    // code 31
      {uint8_t(special_head(kCodeFork, false)), 1, 0},                    // pid 0
      {0x04},                                                             // kind 0
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    std::string p = write_raw({cat({kEnter10, bad[i], kExit5}), cat({kEnter10})});
    ReadDamage d;
    std::vector<Event> got = read_raw(p, &d);
    EXPECT_EQ(d.bad_records, 1u);
    ASSERT_EQ(d.notes.size(), 1u);
    EXPECT_NE(d.notes[0].find("chunk 0"), std::string::npos) << d.notes[0];
    expect_events(got, {ev(Event::kEnter, 10, 0x20), ev(Event::kEnter, 10, 0x20)});
  }
}

TEST_F(RawFileTest, RecordRunningPastAFullChunkIsBad) {
  std::vector<uint8_t> full(kMinChunkSize - 1, kExit5[0]);
  full.push_back(0x81);  // a value continued past the chunk end
  std::string p = write_raw({full, kEnter10});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 1u);
  ASSERT_EQ(got.size(), kMinChunkSize);
  EXPECT_EQ(got.back().type, Event::kEnter);
}

TEST_F(RawFileTest, InheritWithBadAddressYieldsNothing) {
  std::vector<uint8_t> inherit = {uint8_t(special_head(kCodeInherit, false)), 0, 3, 1, 2};
  // Place the INHERIT at the very end of a full chunk so its third address is missing.
  std::vector<uint8_t> c0(kMinChunkSize - inherit.size(), kExit5[0]);
  std::copy(kEnter10.begin(), kEnter10.end(), c0.begin());
  c0.insert(c0.end(), inherit.begin(), inherit.end());
  std::string p = write_raw({c0, kEnter10});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 1u);
  for (const Event& e : got) EXPECT_NE(e.type, Event::kInherit);
}

TEST_F(RawFileTest, ZeroCountInheritIsSkipped) {
  std::vector<uint8_t> inherit = {uint8_t(special_head(kCodeInherit, false)), 4, 0};
  std::string p = write_raw({cat({kEnter10, inherit, kExit5})});
  ReadDamage d;
  expect_events(read_raw(p, &d), {ev(Event::kEnter, 10, 0x20), ev(Event::kExit, 19)});
  EXPECT_EQ(d.bad_records, 0u);
}

TEST_F(RawFileTest, PadBytesAreSkipped) {
  std::string p = write_raw({cat({{kPadByte}, kEnter10, {kPadByte, kPadByte}, kExit5,
                                  {kPadByte}})});
  ReadDamage d;
  expect_events(read_raw(p, &d), {ev(Event::kEnter, 10, 0x20), ev(Event::kExit, 15)});
  EXPECT_EQ(d.bad_records, 0u);
}

TEST_F(RawFileTest, CutInsideARecordIsNoted) {
  // ENTER 10/0x20, then EXIT with dt = 32 (V = 130: two bytes), cut after its first byte.
  std::string p = write_raw({cat({kEnter10, {0x82, 0x01}})});
  fs::resize_file(p, kHeaderSize + 3);
  ReadDamage d;
  expect_events(read_raw(p, &d), {ev(Event::kEnter, 10, 0x20)});
  EXPECT_EQ(d.bad_records, 0u);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("ends inside a record at byte 4098"), std::string::npos)
      << d.notes[0];
}

TEST_F(RawFileTest, CommittedEndBeyondTheFileIsReported) {
  std::string p = write_raw({cat({kEnter10, kExit5})}, [](ThreadFileHeader& h) {
    h.committed_end = kHeaderSize + 3ull * kMinChunkSize;
  });
  ReadDamage d;
  read_raw(p, &d);
  EXPECT_EQ(d.bytes_missing, 2ull * kMinChunkSize);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("131072 bytes (about 26214 calls at the typical 5.0 bytes/call)"),
            std::string::npos)
      << d.notes[0];
}

TEST_F(RawFileTest, RandomBytesNeverCrash) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<uint8_t>> chunks(3, std::vector<uint8_t>(kMinChunkSize));
    for (auto& c : chunks)
      for (auto& b : c) b = static_cast<uint8_t>(rng() % (seed % 2 ? 256 : 16));
    for (auto& c : chunks) c[0] = c[0] ? c[0] : 1;  // keep reading past every chunk
    std::string p = write_raw(chunks);
    if (seed % 3 == 0) fs::resize_file(p, kHeaderSize + kMinChunkSize * 2 + rng() % 5000);
    ReadDamage d;
    std::vector<Event> got = read_raw(p, &d);
    for (size_t i = 1; i < got.size(); ++i) ASSERT_GE(got[i].ticks, got[i - 1].ticks);
    for (const Event& e : got) {
      if (e.type == Event::kUnwind) {
        ASSERT_TRUE(e.reason >= 1 && e.reason <= 3);
      }
    }
  }
}

// ---- invalid files ----------------------------------------------------------------------

TEST_F(RawFileTest, InvalidHeadersAreErrorsNamingTheFile) {
  struct Case {
    void (*patch)(ThreadFileHeader&);
    std::string expect;
  };
  const Case cases[] = {
      {[](ThreadFileHeader& h) { h.magic[0] = 'X'; }, "not a callmon thread file"},
      {[](ThreadFileHeader& h) { h.version = kTraceVersion + 1; },
       "unsupported thread file version " + std::to_string(kTraceVersion + 1)},
      {[](ThreadFileHeader& h) { h.version = 0; }, "unsupported thread file version 0"},
      {[](ThreadFileHeader& h) { h.header_size = 512; }, "header size 512"},
      {[](ThreadFileHeader& h) { h.chunk_size = kMinChunkSize + 100; }, "chunk size"},
      {[](ThreadFileHeader& h) { h.chunk_size = 32768; }, "chunk size 32768"},
      {[](ThreadFileHeader& h) { h.chunk_size = 512u << 20; }, "chunk size"},
      {[](ThreadFileHeader& h) { h.clock = 7; }, "clock kind 7"},
      {[](ThreadFileHeader& h) { h.version = kTraceVersion, h.tick_shift = kMaxTickShift + 1; },
       "impossible tick shift 9"},
  };
  for (const Case& c : cases) {
    std::string p = write_raw({kEnter10}, c.patch);
    auto r = ThreadReader::open(p);
    ASSERT_FALSE(r) << c.expect;
    EXPECT_NE(r.error().find(p + ": "), std::string::npos) << r.error();
    EXPECT_NE(r.error().find(c.expect), std::string::npos) << r.error();
  }
}

TEST_F(ThreadFileTest, MissingShortAndDirectoryFilesAreErrors) {
  auto missing = ThreadReader::open(path("nope.events"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find(path("nope.events")), std::string::npos);

  std::ofstream(path("short.events")) << "CMTHREAD";
  auto small = ThreadReader::open(path("short.events"));
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().find("shorter than the 4096-byte header"), std::string::npos)
      << small.error();

  auto dir = ThreadReader::open(dir_);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().find("is a directory"), std::string::npos) << dir.error();

  // Opening a FIFO for reading would wait for a writer: an error instead.
  ASSERT_EQ(mkfifo(path("fifo.events").c_str(), 0644), 0);
  auto fifo = ThreadReader::open(path("fifo.events"));
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error(), path("fifo.events") + ": not a regular file: a FIFO");
}

TEST_F(ThreadFileTest, WriterRejectsBadChunkSizeAndPath) {
  EXPECT_FALSE(ThreadWriter::create(path("x.events"), 1, 1, "1.0", 5000));
  EXPECT_FALSE(ThreadWriter::create(path("no/such/dir/x.events"), 1, 1, "1.0"));
}

TEST_F(ThreadFileTest, ReaderIsMovable) {
  auto w = ThreadWriter::create(path("m.events"), 1, 1, "1.0");
  ASSERT_TRUE(w);
  w->enter(1, 2);
  w->exit(3);
  ASSERT_TRUE(w->close());
  auto r = ThreadReader::open(path("m.events"));
  ASSERT_TRUE(r);
  Event e;
  ASSERT_TRUE(r->next(e));
  ThreadReader moved = std::move(*r);
  ASSERT_TRUE(moved.next(e));
  EXPECT_EQ(e.type, Event::kExit);
  EXPECT_FALSE(moved.next(e));
}

}  // namespace
}  // namespace callmon::format

namespace callmon::format {
namespace {

// The runtime trims a cleanly finished thread's file to the end of its data; that is not
// damage. (Regression: the reader used to warn that the last chunk was cut short.)
TEST_F(ThreadFileTest, FinishedFileTrimmedToItsDataIsNotDamage) {
  auto w = ThreadWriter::create(path("t.events"), 1, 1, "1.0");
  ASSERT_TRUE(w.ok()) << w.error();
  w->enter(10, 0x1000);
  w->exit(20);
  w->end(30);
  ASSERT_TRUE(w->close(true).ok());
  uint64_t end = 0;
  {
    auto r = ThreadReader::open(path("t.events"));
    ASSERT_TRUE(r.ok()) << r.error();
    end = r->header().end_offset;
  }
  ASSERT_GT(end, kHeaderSize);
  ASSERT_EQ(truncate(path("t.events").c_str(), static_cast<off_t>(end)), 0);
  auto r = ThreadReader::open(path("t.events"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(read_all(*r).size(), 3u);
  EXPECT_TRUE(r->damage().notes.empty()) << r->damage().notes.front();
  EXPECT_EQ(r->damage().bytes_missing, 0u);

  // Cut one byte more and it is damage again.
  ASSERT_EQ(truncate(path("t.events").c_str(), static_cast<off_t>(end - 1)), 0);
  auto cut = ThreadReader::open(path("t.events"));
  ASSERT_TRUE(cut.ok());
  read_all(*cut);
  EXPECT_FALSE(cut->damage().notes.empty());
}

}  // namespace
}  // namespace callmon::format

// ---- ARGS and RETVAL records (format version 2) -----------------------------------------

namespace callmon::format {
namespace {

std::vector<uint8_t> payload_of(const Event& e) {
  return std::vector<uint8_t>(e.data, e.data + e.size);
}

TEST_F(ThreadFileTest, ArgsAndRetvalRoundTrip) {
  const std::vector<uint8_t> args = {3, 1, 20};            // i32 10 at position 1
  const std::vector<uint8_t> nested_args = {14, 1, 1};     // bool true
  const std::vector<uint8_t> retval = {3, 0, 0x80, 0x01};  // i32 64
  const std::vector<uint8_t> big(300, 0x55);               // a length of two LEB128 bytes
  auto w = ThreadWriter::create(path("a.events"), 1, 1, "1.0");
  ASSERT_TRUE(w) << w.error();
  w->enter(100, 0x401000);
  w->args(100, args);
  w->nested_enter(105, 0x402000);
  w->args(105, nested_args, true);
  w->nested_exit(106);
  w->retval(106, {}, true);  // an empty payload
  w->exit(200);
  w->retval(200, retval);
  w->enter(210, 0x401000);
  w->args(210, big);
  w->exit(220);
  w->end(230);
  ASSERT_TRUE(w->close(true));

  auto r = ThreadReader::open(path("a.events"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->header().version, kTraceVersion);
  std::vector<Event> got;
  std::vector<std::vector<uint8_t>> payloads;
  Event e;
  while (r->next(e)) {
    got.push_back(e);
    payloads.push_back(payload_of(e));  // copied now: valid until the next next()
  }
  const std::vector<Event> want = {
      ev(Event::kEnter, 100, 0x401000),
      ev(Event::kArgs, 100),
      ev(Event::kEnter, 105, 0x402000, 0, 0, true),
      ev(Event::kArgs, 105, 0, 0, 0, true),
      ev(Event::kExit, 106, 0, 0, 0, true),
      ev(Event::kRetval, 106, 0, 0, 0, true),
      ev(Event::kExit, 200),
      ev(Event::kRetval, 200),
      ev(Event::kEnter, 210, 0x401000),
      ev(Event::kArgs, 210),
      ev(Event::kExit, 220),
      ev(Event::kEnd, 230),
  };
  expect_events(got, want);
  EXPECT_EQ(payloads[1], args);
  EXPECT_EQ(payloads[3], nested_args);
  EXPECT_TRUE(payloads[5].empty());
  EXPECT_NE(got[5].data, nullptr);
  EXPECT_EQ(payloads[7], retval);
  EXPECT_EQ(payloads[9], big);
  for (size_t i : {0, 2, 4, 6, 8, 10, 11}) {
    EXPECT_EQ(got[i].data, nullptr) << i;
    EXPECT_EQ(got[i].size, 0u) << i;
  }
  EXPECT_EQ(r->damage().bad_records, 0u);
  EXPECT_TRUE(r->damage().notes.empty());
  EXPECT_EQ(r->bytes_read(), r->header().end_offset - kHeaderSize);
}

TEST_F(ThreadFileTest, ArgsAcrossManyChunks) {
  // ENTER+ARGS, EXIT+RETVAL pairs through several chunk switches.
  auto w = ThreadWriter::create(path("m.events"), 1, 1, "1.0");
  ASSERT_TRUE(w);
  const int calls = 20000;
  uint64_t t = 0;
  for (int i = 0; i < calls; ++i) {
    const std::vector<uint8_t> a = {8, 1, static_cast<uint8_t>(i & 0x7f)};  // u64 i % 128
    w->enter(t += 10, 0x401000 + (i % 5) * 0x10);
    w->args(t, a);
    w->exit(t += 20);
    w->retval(t, a);
  }
  ASSERT_TRUE(w->close(true));
  auto r = ThreadReader::open(path("m.events"));
  ASSERT_TRUE(r);
  ASSERT_GT(r->file_size(), kHeaderSize + 2ull * kMinChunkSize);
  Event e;
  int i = 0, k = 0;
  uint64_t last = 0;
  while (r->next(e)) {
    const Event::Type want[] = {Event::kEnter, Event::kArgs, Event::kExit, Event::kRetval};
    ASSERT_EQ(e.type, want[k]) << i;
    if (e.type == Event::kArgs || e.type == Event::kRetval) {
      ASSERT_EQ(e.size, 3u);
      EXPECT_EQ(e.data[2], static_cast<uint8_t>(i & 0x7f));
      EXPECT_EQ(e.ticks, last);  // delta 0: the time of its ENTER or EXIT
    }
    last = e.ticks;
    if (++k == 4) k = 0, ++i;
  }
  EXPECT_EQ(i, calls);
  EXPECT_EQ(r->damage().bad_records, 0u);
}

TEST_F(RawFileTest, VersionOneFilesAreRead) {
  std::string p = write_raw({cat({kEnter10, kExit5})},
                            [](ThreadFileHeader& h) { h.version = 1; });
  expect_events(read_raw(p), {ev(Event::kEnter, 10, 0x20), ev(Event::kExit, 15)});
}

// ---- PAUSE records (format version 3) ----------------------------------------------------

const uint8_t kPauseHead = static_cast<uint8_t>(special_head(kCodePause, false));

TEST_F(RawFileTest, PauseCarriesItsTicksAndMovesTheTimeBase) {
  // ENTER at 10; PAUSE 7 later (17) of 300 ticks (two LEB128 bytes); EXIT 5 after it.
  std::string p = write_raw({cat({kEnter10, {kPauseHead, 7, 0xAC, 0x02}, kExit5})});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 0u);
  expect_events(got, {ev(Event::kEnter, 10, 0x20), ev(Event::kPause, 17, 0, 300),
                      ev(Event::kExit, 22)});
}

// ---- HIDDEN records (format version 5) ---------------------------------------------------

const uint8_t kHiddenHead = static_cast<uint8_t>(special_head(kCodeHidden, false));

TEST_F(RawFileTest, HiddenCarriesItsCountsAndCaptureTicks) {
  // ENTER at 10; HIDDEN 3 later (13): 5 filtered, 2 taken back, 300 capture ticks.
  std::string p = write_raw({cat({kEnter10, {kHiddenHead, 3, 5, 2, 0xAC, 0x02}, kExit5})});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 0u);
  expect_events(got, {ev(Event::kEnter, 10, 0x20), ev(Event::kHidden, 13, 2, 5),
                      ev(Event::kExit, 18)});
  EXPECT_EQ(got[1].capture, 300u);
}

TEST_F(RawFileTest, HiddenWithAnImpossibleCountAbandonsItsChunk) {
  // 2^42 filtered calls between two records.
  std::string p = write_raw(
      {cat({kEnter10, {kHiddenHead, 3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0}, kExit5}),
       cat({kEnter10})});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 1u);
  expect_events(got, {ev(Event::kEnter, 10, 0x20), ev(Event::kEnter, 10, 0x20)});
}

TEST_F(RawFileTest, VersionTwoFilesAreRead) {
  std::string p = write_raw({cat({kEnter10, kExit5})},
                            [](ThreadFileHeader& h) { h.version = 2; });
  expect_events(read_raw(p), {ev(Event::kEnter, 10, 0x20), ev(Event::kExit, 15)});
}

const uint8_t kArgsHead = static_cast<uint8_t>(special_head(kCodeArgs, false));
const uint8_t kRetvalHead = static_cast<uint8_t>(special_head(kCodeRetval, false));

TEST_F(RawFileTest, ArgsPayloadIsDelimitedNotDecoded) {
  // The reader hands the payload over as is, even one the value decoder would reject.
  std::string p = write_raw({cat({kEnter10, {kArgsHead, 0, 3, 99, 1, 0}, kExit5,
                                  {kRetvalHead, 0, 0}})});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 0u);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].type, Event::kArgs);
  EXPECT_EQ(got[1].size, 3u);
  EXPECT_EQ(got[3].type, Event::kRetval);
  EXPECT_EQ(got[3].size, 0u);
}

TEST_F(RawFileTest, PayloadRunningPastTheChunkEndIsABadRecord) {
  // A full chunk whose last record claims 10 payload bytes where 2 remain.
  std::vector<uint8_t> tail = {kArgsHead, 0, 10, 1, 2};
  std::vector<uint8_t> c0(kMinChunkSize - tail.size(), kExit5[0]);
  std::copy(kEnter10.begin(), kEnter10.end(), c0.begin());
  c0.insert(c0.end(), tail.begin(), tail.end());
  std::string p = write_raw({c0, kEnter10});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 1u);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("payload runs past the end of the chunk"), std::string::npos)
      << d.notes[0];
  for (const Event& e : got) EXPECT_NE(e.type, Event::kArgs);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().type, Event::kEnter);  // the next chunk is read
  EXPECT_EQ(got.back().addr, 0x20u);
}

TEST_F(RawFileTest, HugePayloadLengthIsABadRecord) {
  // A length near 2^64 must not wrap the bounds check.
  std::string p = write_raw({cat({kEnter10,
                                  {kRetvalHead, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0x01},
                                  kExit5}),
                             kEnter10});
  ReadDamage d;
  std::vector<Event> got = read_raw(p, &d);
  EXPECT_EQ(d.bad_records, 1u);
  expect_events(got, {ev(Event::kEnter, 10, 0x20), ev(Event::kEnter, 10, 0x20)});
}

TEST_F(RawFileTest, FileCutInsideAPayloadIsATruncation) {
  std::string p = write_raw({cat({kEnter10, {kArgsHead, 0, 6, 3, 1, 2}})});
  fs::resize_file(p, kHeaderSize + kEnter10.size() + 5);  // 2 payload bytes of 6 left
  ReadDamage d;
  expect_events(read_raw(p, &d), {ev(Event::kEnter, 10, 0x20)});
  EXPECT_EQ(d.bad_records, 0u);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("ends inside a record"), std::string::npos) << d.notes[0];
}

}  // namespace
}  // namespace callmon::format

namespace callmon::format {
namespace {

// ---- format version 8: ucontext switches (UNWIND reason 4, INHERIT mid-stream) ----------

// A coroutine switch as the runtime writes it: main's context set aside, the coroutine's
// call, then main's context taken up again.
std::vector<Event> write_switch(ThreadWriter& w) {
  w.enter(10, 0x1000);
  w.unwind(20, 1, UnwindReason::kSuspended);
  w.enter(20, 0x2000);
  w.unwind(30, 1, UnwindReason::kSuspended);
  w.inherit(30, {0x1000});
  w.exit(40);
  w.end(40);
  return {ev(Event::kEnter, 10, 0x1000), ev(Event::kUnwind, 20, 0, 1, 4),
          ev(Event::kEnter, 20, 0x2000), ev(Event::kUnwind, 30, 0, 1, 4),
          ev(Event::kInherit, 30, 0x1000), ev(Event::kExit, 40), ev(Event::kEnd, 40)};
}

TEST_F(ThreadFileTest, FormatVersionEightHoldsSuspensions) {
  EXPECT_EQ(kTraceVersion, 8);
  EXPECT_EQ(kSuspendVersion, kTraceVersion);
  auto w = ThreadWriter::create(path("v8.events"), 1, 1, "1.0");
  ASSERT_TRUE(w);
  std::vector<Event> want = write_switch(*w);
  ASSERT_TRUE(w->close(true));
  auto r = ThreadReader::open(path("v8.events"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->header().version, 8);
  expect_events(read_all(*r), want);
  EXPECT_EQ(r->damage().bad_records, 0u);
}

// The runtime that introduced the switches wrote them under version 7 for a while: still read.
TEST_F(ThreadFileTest, FormatVersionSevenFilesWithSuspensionsAreRead) {
  auto w = ThreadWriter::create(path("v7.events"), 1, 1, "1.0", kMinChunkSize,
                                ClockKind::kTsc, 7);
  ASSERT_TRUE(w);
  std::vector<Event> want = write_switch(*w);
  ASSERT_TRUE(w->close(true));
  auto r = ThreadReader::open(path("v7.events"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->header().version, 7);
  expect_events(read_all(*r), want);
  EXPECT_EQ(r->damage().bad_records, 0u);
}

// Every older version is still accepted; a newer one is refused whole, said as such.
TEST_F(RawFileTest, FormatVersionsOlderReadNewerRefused) {
  for (uint16_t v = kMinTraceVersion; v <= kTraceVersion; ++v) {
    std::string p = write_raw({cat({kEnter10, kExit5})});
    {  // the version on the file itself (write_raw's patch is a plain function)
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(offsetof(ThreadFileHeader, version));
      f.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
    auto r = ThreadReader::open(p);
    EXPECT_TRUE(r) << "version " << v << ": " << (r ? "" : r.error());
  }
  std::string p = write_raw({cat({kEnter10, kExit5})},
                            [](ThreadFileHeader& h) { h.version = kTraceVersion + 1; });
  auto r = ThreadReader::open(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("unsupported thread file version 9: recording made by a newer "
                           "callmon (this callmon reads versions 1 to 8)"),
            std::string::npos)
      << r.error();
}

}  // namespace
}  // namespace callmon::format
