// Decoding ahead on a second thread (analysis/event_prefetch.hpp): the batches hold exactly
// the reader's events in order (across many batches, with payloads copied), a decoder's
// exception comes out where its batch would have, an empty stream and a consumer that stops
// early end cleanly, damaged files (a bad record in a chunk, a zeroed chunk, a cut last
// chunk) give the same events and damage as reading inline, and the call walk gives the
// same calls either way.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/event_prefetch.hpp"
#include "format/thread_reader.hpp"
#include "format/trace_writer.hpp"

namespace callmon::analysis {
namespace {

namespace fs = std::filesystem;
using format::Event;

// A stand-in reader: yields `n` events (every 7th a special one with a payload), throwing
// at event `throw_at` if set.
struct FakeReader {
  uint64_t n = 0;
  uint64_t throw_at = UINT64_MAX;
  uint64_t i = 0;
  uint8_t byte = 0;
  bool next(Event& ev) {
    if (i == throw_at) throw std::runtime_error("decoder failed");
    if (i == n) return false;
    ev = Event{};
    ev.ticks = 100 + i;
    if (i % 7 == 3) {
      ev.type = Event::kArgs;
      byte = static_cast<uint8_t>(i);
      ev.data = &byte;  // valid until the next call, as a reader's chunk
      ev.size = 1;
    } else {
      ev.type = i % 2 ? Event::kExit : Event::kEnter;
      ev.addr = ev.type == Event::kEnter ? 0x1000 + i : 0;
    }
    ++i;
    return true;
  }
  uint64_t bytes_read() const { return i * 3; }
};

// Every event of the batches, payloads resolved, as (type, ticks, addr, payload byte).
struct Seen {
  uint8_t type;
  uint64_t ticks, addr;
  int payload;
};

template <class Reader>
std::vector<Seen> drain(EventPrefetch<Reader>& p) {
  std::vector<Seen> out;
  while (const EventBatch* b = p.next_batch()) {
    size_t plain = 0, enters = 0, other = 0;
    for (uint8_t k : b->kinds) {
      if (k != EventBatch::kOther) {
        // Only an ENTER has an address in the batch (an EXIT's is 0).
        const uint64_t addr = k == Event::kEnter ? b->addrs[enters++] : 0;
        out.push_back({k, b->ticks[plain], addr, -1});
        ++plain;
      } else {
        const Event& e = b->others[other++];
        out.push_back({static_cast<uint8_t>(e.type), e.ticks, e.addr,
                       e.size ? e.data[0] : -1});
      }
    }
  }
  return out;
}

TEST(EventPrefetch, BatchesHoldTheEventsInOrder) {
  const uint64_t n = 9 * EventPrefetch<FakeReader>::kBatchEvents + 123;
  FakeReader r{n};
  EventPrefetch<FakeReader> p(r);
  std::vector<Seen> seen = drain(p);
  ASSERT_EQ(seen.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(seen[i].ticks, 100 + i) << i;
    if (i % 7 == 3) {
      ASSERT_EQ(seen[i].type, Event::kArgs) << i;
      ASSERT_EQ(seen[i].payload, static_cast<uint8_t>(i)) << i;
    } else {
      ASSERT_EQ(seen[i].type, i % 2 ? Event::kExit : Event::kEnter) << i;
      ASSERT_EQ(seen[i].addr, i % 2 ? 0 : 0x1000 + i) << i;
    }
  }
  EXPECT_EQ(p.next_batch(), nullptr);  // and stays at the end
}

TEST(EventPrefetch, EmptyStream) {
  FakeReader r{0};
  EventPrefetch<FakeReader> p(r);
  EXPECT_TRUE(drain(p).empty());
}

TEST(EventPrefetch, DecoderExceptionComesAfterTheBatchesBeforeIt) {
  const uint64_t at = 3 * EventPrefetch<FakeReader>::kBatchEvents + 5;
  FakeReader r{at * 2, at};
  EventPrefetch<FakeReader> p(r);
  uint64_t got = 0;
  try {
    while (const EventBatch* b = p.next_batch()) got += b->kinds.size();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "decoder failed");
  }
  // The batch that failed is lost whole; every one before it came.
  EXPECT_EQ(got, 3 * EventPrefetch<FakeReader>::kBatchEvents);
}

TEST(EventPrefetch, ConsumerStoppingEarlyStopsTheDecoder) {
  FakeReader r{UINT64_MAX};  // endless
  {
    EventPrefetch<FakeReader> p(r);
    ASSERT_NE(p.next_batch(), nullptr);
  }  // the destructor must not hang on a decoder waiting for a free slot
  EXPECT_LE(r.i, (EventPrefetch<FakeReader>::kSlots + 2) * EventPrefetch<FakeReader>::kBatchEvents);
}

// A walk slower than the decoder: the decoder fills every slot and waits for half of them
// (kRefill) to be free; each time it must be woken, never left waiting while the walk waits
// for it. Many rounds of that, every event once and in order.
TEST(EventPrefetch, SlowConsumerWakesTheWaitingDecoder) {
  using P = EventPrefetch<FakeReader>;
  const uint64_t n = (3 * P::kSlots + 3) * P::kBatchEvents + 5;
  FakeReader r{n};
  P p(r);
  uint64_t got = 0, next_ticks = 100;
  bool ordered = true;
  while (const EventBatch* b = p.next_batch()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the decoder gets ahead
    size_t plain = 0;
    for (uint8_t k : b->kinds)
      if (k != EventBatch::kOther) ordered &= b->ticks[plain++] == next_ticks++;
      else ++next_ticks;
    got += b->kinds.size();
  }
  EXPECT_TRUE(ordered);
  EXPECT_EQ(got, n);
}

TEST(CoreBudget, SpareOnlyWhenACoreIsFree) {
  CoreBudget two(2);
  {
    CoreLease a(two, true);
    EXPECT_TRUE(a.spare());  // one walk on two cores: the decoder gets the second
    CoreLease b(two, true);
    EXPECT_FALSE(b.spare());
    EXPECT_EQ(two.free(), -1);
  }
  EXPECT_EQ(two.free(), 2);
  CoreBudget three(3);
  {
    CoreLease a(three, false);  // a walk that does not decode ahead leaves the spare
    CoreLease b(three, true);
    EXPECT_FALSE(a.spare());
    EXPECT_TRUE(b.spare());
    EXPECT_EQ(three.free(), 0);
  }
  EXPECT_EQ(three.free(), 3);
  CoreBudget one(1);
  CoreLease c(one, true);
  EXPECT_FALSE(c.spare());
}

// Thread files: written with the format library, damaged in place, read both ways.
class PrefetchFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_prefetch_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto w = format::ThreadWriter::create(path("good.events"), 1, 1, "1.0",
                                          format::kMinChunkSize);
    ASSERT_TRUE(w) << w.error();
    std::mt19937_64 rng(11);
    uint64_t t = 1'000'000;
    size_t depth = 0;
    for (int i = 0; i < 150'000; ++i) {
      t += rng() % 3000;
      if (depth < 2 || (depth < 100 && rng() % 2)) {
        w->enter(t, 0x400000 + (rng() % 512) * 16);
        ++depth;
        if (i % 97 == 0) w->args(t, {1, 2, static_cast<uint8_t>(i)});
      } else {
        w->exit(t);
        --depth;
        if (i % 89 == 0) w->retval(t, {static_cast<uint8_t>(i), 9});
        if (i % 1001 == 0) w->pause(t, 40);
      }
    }
    while (depth-- > 0) w->exit(t += 5);
    w->end(t);
    ASSERT_TRUE(w->close(true));
    chunks_ = (fs::file_size(path("good.events")) - format::kHeaderSize) / format::kMinChunkSize;
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
  uint64_t chunk_offset(uint64_t i) const {
    return format::kHeaderSize + i * format::kMinChunkSize;
  }

  // Reads `file` inline and through EventPrefetch: same events, payloads and damage.
  void expect_same_both_ways(const std::string& file) {
    auto a = format::ThreadReader::open(file);
    auto b = format::ThreadReader::open(file);
    ASSERT_TRUE(a && b);
    std::vector<Seen> inline_seen;
    Event ev;
    while (a->next(ev))
      inline_seen.push_back({static_cast<uint8_t>(ev.type), ev.ticks, ev.addr,
                             ev.size ? ev.data[ev.size - 1] : -1});
    std::vector<Seen> ahead;
    {
      EventPrefetch<format::ThreadReader> p(*b);
      ahead = drain(p);
    }
    ASSERT_EQ(ahead.size(), inline_seen.size());
    for (size_t i = 0; i < ahead.size(); ++i) {
      ASSERT_EQ(ahead[i].type, inline_seen[i].type) << i;
      ASSERT_EQ(ahead[i].ticks, inline_seen[i].ticks) << i;
      ASSERT_EQ(ahead[i].addr, inline_seen[i].addr) << i;
    }
    EXPECT_EQ(a->damage().notes, b->damage().notes);
    EXPECT_EQ(a->damage().bad_records, b->damage().bad_records);
    EXPECT_EQ(a->bytes_read(), b->bytes_read());
  }

  std::string dir_;
  uint64_t chunks_ = 0;
};

TEST_F(PrefetchFileTest, CleanFile) { expect_same_both_ways(path("good.events")); }

TEST_F(PrefetchFileTest, BadRecordInAChunk) {
  std::string f = copy("bad.events");
  poke(f, chunk_offset(1) + 5000, std::vector<uint8_t>(12, 0xff));
  expect_same_both_ways(f);
}

TEST_F(PrefetchFileTest, ZeroedChunk) {
  std::string f = copy("zero.events");
  poke(f, chunk_offset(2), std::vector<uint8_t>(format::kMinChunkSize, 0));
  expect_same_both_ways(f);
}

TEST_F(PrefetchFileTest, CutLastChunk) {
  std::string f = copy("cut.events");
  fs::resize_file(f, chunk_offset(chunks_ - 1) + 777);
  expect_same_both_ways(f);
}

// A sink that keeps every finished call.
struct KeepCalls {
  std::vector<FinishedCall> calls;
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_call(const FinishedCall& c) { calls.push_back(c); }
  void on_special(const Event&, uint32_t) {}
};

TEST_F(PrefetchFileTest, WalkGivesTheSameCallsEitherWay) {
  std::string f = copy("cut.events");
  fs::resize_file(f, chunk_offset(chunks_ - 1) + 999);
  auto a = format::ThreadReader::open(f);
  auto b = format::ThreadReader::open(f);
  ASSERT_TRUE(a && b);
  KeepCalls sa, sb;
  CallWalker<KeepCalls> wa(sa), wb(sb);
  wa.set_probe_cost(3.5, 9.25);
  wb.set_probe_cost(3.5, 9.25);
  wa.subtract_pauses(true);
  wb.subtract_pauses(true);
  auto no_tick = [](uint64_t) {};
  const uint64_t ea = walk_thread_inline(*a, wa, no_tick);
  const uint64_t eb = walk_thread_prefetched(*b, wb, no_tick);
  EXPECT_EQ(ea, eb);
  ASSERT_EQ(sa.calls.size(), sb.calls.size());
  ASSERT_GT(sa.calls.size(), 50'000u);
  for (size_t i = 0; i < sa.calls.size(); ++i) {
    const FinishedCall &x = sa.calls[i], &y = sb.calls[i];
    ASSERT_TRUE(x.addr == y.addr && x.start == y.start && x.end == y.end &&
                x.vstart == y.vstart && x.time == y.time && x.self == y.self &&
                x.time_lo == y.time_lo && x.time_hi == y.time_hi && x.self_lo == y.self_lo &&
                x.self_hi == y.self_hi && x.depth == y.depth && x.exit == y.exit)
        << i;
  }
  EXPECT_EQ(wa.left_open(), wb.left_open());
  // The prefetched walk decodes through a reader moved to memory of its own and moves it
  // back: the caller's reader then tells what it read and the damage it met, as inline.
  EXPECT_GT(b->bytes_read(), 0u);
  EXPECT_EQ(a->bytes_read(), b->bytes_read());
  EXPECT_EQ(a->damage().bytes_missing, b->damage().bytes_missing);
  EXPECT_GT(b->damage().bytes_missing, 0u);  // the cut file
  EXPECT_EQ(a->damage().notes, b->damage().notes);
}

}  // namespace
}  // namespace callmon::analysis
