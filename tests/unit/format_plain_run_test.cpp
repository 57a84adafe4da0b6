// ThreadReader::next_plain_run (format/plain_run.cpp): runs of plain ENTER and EXIT records
// decoded into narrow arrays give exactly the records, the counters and the damage of
// next() alone, mixed with next() at any run length, in both encodings (version 5's and
// the compact one), with module-tagged addresses, and on damaged files (a bad record, a
// zeroed chunk, a file cut inside a record): the damage stays reported as before.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "format/module_lifetimes.hpp"
#include "format/thread_reader.hpp"
#include "format/trace_writer.hpp"

namespace callmon::format {
namespace {

namespace fs = std::filesystem;

// One record as seen by the walk: its kind, time and (ENTER, INHERIT) address.
struct Rec {
  uint8_t type;
  uint64_t ticks, addr;
  bool operator==(const Rec&) const = default;
};

struct Read {
  std::vector<Rec> recs;
  uint64_t bytes = 0;
  ReadDamage damage;
};

// Reads `path` with next() only.
Read read_plain(const std::string& path, const ModuleLifetimes* lifetimes = nullptr) {
  auto r = ThreadReader::open(path);
  EXPECT_TRUE(r) << r.error();
  if (lifetimes) r->use_module_lifetimes(*lifetimes);
  Read out;
  Event ev;
  while (r->next(ev)) out.recs.push_back({ev.type, ev.ticks, ev.addr});
  out.bytes = r->bytes_read();
  out.damage = r->damage();
  return out;
}

// Reads `path` with runs of at most `room()` records between single next() calls.
template <class Room>
Read read_runs(const std::string& path, Room room, const ModuleLifetimes* lifetimes = nullptr,
               uint64_t* in_runs = nullptr) {
  auto r = ThreadReader::open(path);
  EXPECT_TRUE(r) << r.error();
  if (lifetimes) r->use_module_lifetimes(*lifetimes);
  Read out;
  std::vector<uint8_t> kinds(4096);
  std::vector<uint64_t> ticks(4096), addrs(4096);
  Event ev;
  for (;;) {
    const size_t want = room();
    size_t enters = 99;
    const size_t got = r->next_plain_run(kinds.data(), ticks.data(), addrs.data(), want, enters);
    EXPECT_LE(got, want);
    EXPECT_LE(enters, got);
    size_t e = 0;
    for (size_t i = 0; i < got; ++i) {
      EXPECT_TRUE(kinds[i] == Event::kEnter || kinds[i] == Event::kExit);
      out.recs.push_back({kinds[i], ticks[i], kinds[i] == Event::kEnter ? addrs[e++] : 0});
    }
    EXPECT_EQ(e, enters);
    if (in_runs) *in_runs += got;
    if (!r->next(ev)) break;
    out.recs.push_back({ev.type, ev.ticks, ev.addr});
  }
  // At the end a run yields nothing more.
  size_t enters = 0;
  EXPECT_EQ(r->next_plain_run(kinds.data(), ticks.data(), addrs.data(), 16, enters), 0u);
  out.bytes = r->bytes_read();
  out.damage = r->damage();
  return out;
}

void expect_same(const Read& a, const Read& b) {
  ASSERT_EQ(a.recs.size(), b.recs.size());
  for (size_t i = 0; i < a.recs.size(); ++i) {
    ASSERT_EQ(a.recs[i].type, b.recs[i].type) << i;
    ASSERT_EQ(a.recs[i].ticks, b.recs[i].ticks) << i;
    ASSERT_EQ(a.recs[i].addr, b.recs[i].addr) << i;
  }
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.damage.notes, b.damage.notes);
  EXPECT_EQ(a.damage.bad_records, b.damage.bad_records);
  EXPECT_EQ(a.damage.bytes_missing, b.damage.bytes_missing);
}

// Files of both encodings, with every kind of record among the plain ones.
class PlainRunTest : public ::testing::TestWithParam<uint16_t> {
 protected:
  void SetUp() override {
    dir_ = std::string(::testing::TempDir()) + "/callmon_plain_run." + std::to_string(getpid());
    fs::create_directories(dir_);
    auto w = ThreadWriter::create(path("good.events"), 1, 1, "1.0", kMinChunkSize,
                                  ClockKind::kTsc, GetParam());
    ASSERT_TRUE(w) << w.error();
    std::mt19937_64 rng(5);
    uint64_t t = 1'000'000;
    size_t depth = 0;
    w->inherit(t, {0x1000, 0x1010});
    for (int i = 0; i < 200'000; ++i) {
      // Mostly small deltas, some long ones (longer LEB128 values).
      t += rng() % 8 == 0 ? rng() % 5'000'000 : rng() % 300;
      if (depth < 2 || (depth < 60 && rng() % 2)) {
        // A few hot functions (the compact encoding's guess and cache) and many cold ones,
        // some in the module that is replaced (0x7000..0x9000).
        const uint64_t addr = rng() % 4 ? 0x400000 + (rng() % 8) * 16
                              : rng() % 3 ? 0x7000 + (rng() % 256) * 16
                                          : 0x500000 + (rng() % 100000) * 16;
        w->enter(t, addr);
        ++depth;
        if (i % 301 == 0) w->args(t, {1, 2, static_cast<uint8_t>(i)});
        if (i % 1009 == 0) w->clock_read(t);
      } else {
        w->exit(t);
        --depth;
        if (i % 293 == 0) w->retval(t, {static_cast<uint8_t>(i), 9});
        if (i % 997 == 0) w->pause(t, 40);
        if (i % 1013 == 0) {
          w->nested_enter(t + 1, 0x999000);
          w->nested_exit(t + 2);
        }
        if (i % 4999 == 0) w->hidden(t, 3, 1, 20);
      }
    }
    while (depth-- > 0) w->exit(t += 5);
    w->end(t);
    ASSERT_TRUE(w->close(true));
    chunks_ = (fs::file_size(path("good.events")) - kHeaderSize) / kMinChunkSize;
    ASSERT_GE(chunks_, 4u);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
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

  // The file read with next() alone and with runs of several lengths: the same.
  void expect_same_every_way(const std::string& file) {
    const Read plain = read_plain(file);
    ASSERT_GT(plain.recs.size(), 10'000u);  // a zeroed chunk ends the reading
    uint64_t in_runs = 0;
    expect_same(plain, read_runs(file, [] { return size_t{4096}; }, nullptr, &in_runs));
    // Most records come in runs (the rest: other kinds and the ends of chunks).
    EXPECT_GT(in_runs, plain.recs.size() * 9 / 10);
    expect_same(plain, read_runs(file, [] { return size_t{1}; }));
    expect_same(plain, read_runs(file, [] { return size_t{0}; }));
    std::mt19937 rng(3);
    expect_same(plain, read_runs(file, [&] { return size_t{rng() % 40}; }));
  }

  std::string dir_;
  uint64_t chunks_ = 0;
};

TEST_P(PlainRunTest, CleanFile) { expect_same_every_way(path("good.events")); }

TEST_P(PlainRunTest, BadRecordInAChunk) {
  const std::string f = copy("bad.events");
  poke(f, chunk_offset(1) + 3000, std::vector<uint8_t>(12, 0xff));  // a value too long
  poke(f, chunk_offset(2) + 2000, {0x00, 0x00});  // a record of kind 0 (or an early end)
  const Read r = read_plain(f);
  EXPECT_GE(r.damage.bad_records, 1u);
  expect_same_every_way(f);
}

TEST_P(PlainRunTest, ZeroedChunk) {
  const std::string f = copy("zero.events");
  poke(f, chunk_offset(2), std::vector<uint8_t>(kMinChunkSize, 0));
  expect_same_every_way(f);
}

TEST_P(PlainRunTest, FileCutInsideARecord) {
  const std::string f = copy("cut.events");
  fs::resize_file(f, chunk_offset(chunks_ - 1) + 1001);
  const Read r = read_plain(f);
  EXPECT_GT(r.damage.bytes_missing, 0u);
  EXPECT_FALSE(r.damage.notes.empty());
  expect_same_every_way(f);
}

TEST_P(PlainRunTest, ModuleTagsAsNext) {
  // 0x7000..0x9000 held one library until tick 3e9 and another after: addresses there are
  // tagged by the time of their call.
  const std::vector<ModuleRecord> modules = {
      {0x400000, 0x2000000, 0x400000, "/bin/prog", kNeverUnmapped},
      {0x7000, 0x9000, 0x7000, "/lib/liba.so", 3'000'000'000},
      {0x7000, 0x9000, 0x7000, "/lib/libb.so", kNeverUnmapped}};
  const ModuleLifetimes lifetimes(modules);
  ASSERT_TRUE(lifetimes.active());
  const std::string f = path("good.events");
  const Read plain = read_plain(f, &lifetimes);
  const Read untagged = read_plain(f);
  size_t tagged = 0;
  for (size_t i = 0; i < plain.recs.size(); ++i) tagged += plain.recs[i] != untagged.recs[i];
  EXPECT_GT(tagged, 0u);
  expect_same(plain, read_runs(f, [] { return size_t{4096}; }, &lifetimes));
  std::mt19937 rng(8);
  expect_same(plain, read_runs(f, [&] { return size_t{rng() % 40}; }, &lifetimes));
}

TEST_P(PlainRunTest, EmptyStream) {
  auto w = ThreadWriter::create(path("empty.events"), 1, 1, "1.0", kMinChunkSize,
                                ClockKind::kTsc, GetParam());
  ASSERT_TRUE(w) << w.error();
  ASSERT_TRUE(w->close(true));
  auto r = ThreadReader::open(path("empty.events"));
  ASSERT_TRUE(r) << r.error();
  uint8_t k[4];
  uint64_t t[4], a[4];
  size_t enters = 7;
  EXPECT_EQ(r->next_plain_run(k, t, a, 4, enters), 0u);
  EXPECT_EQ(enters, 0u);
  Event ev;
  EXPECT_FALSE(r->next(ev));
  EXPECT_EQ(r->next_plain_run(k, t, a, 4, enters), 0u);
}

INSTANTIATE_TEST_SUITE_P(Versions, PlainRunTest, ::testing::Values(uint16_t{5}, kTraceVersion),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

}  // namespace
}  // namespace callmon::format
