// walk_thread_pipelined (analysis/pipelined_walk.hpp): decoding on a second thread hands
// the walker the same records in the same order, across many batches and chunks, so every
// figure equals the serial walk's.
#include "analysis/pipelined_walk.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/flat_profile.hpp"
#include "format/trace_writer.hpp"

namespace callmon::analysis {
namespace {

// Every finished call, as the walk reports it.
struct CallLog {
  std::vector<FinishedCall> calls;
  uint64_t specials = 0;
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_call(const FinishedCall& c) { calls.push_back(c); }
  void on_special(const format::Event&, uint32_t) { ++specials; }
};

bool same(const FinishedCall& a, const FinishedCall& b) {
  return a.addr == b.addr && a.start == b.start && a.end == b.end && a.vstart == b.vstart &&
         a.time == b.time && a.self == b.self && a.self_lo == b.self_lo &&
         a.self_hi == b.self_hi && a.time_lo == b.time_lo && a.time_hi == b.time_hi &&
         a.depth == b.depth && a.exit == b.exit;
}

TEST(PipelinedWalk, SameCallsAsTheSerialWalk) {
  char tmpl[] = "/tmp/callmon_pipelined_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/1.0.1.events";
  {
    auto w = format::ThreadWriter::create(path, 1, 1, "1.0", format::kMinChunkSize);
    ASSERT_TRUE(w) << w.error();
    uint64_t t = 100, rng = 12345;
    w->enter(t, 0x1000);
    for (int i = 0; i < 60000; ++i) {  // ~7 batches, many chunks
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      int depth = 1 + static_cast<int>((rng >> 40) % 5);
      for (int d = 0; d < depth; ++d) w->enter(t += 3 + (rng >> 60), 0x1000 + 16 * d);
      if (i % 97 == 0) w->pause(t += 50, 20);
      if (i % 31 == 0) {
        w->unwind(t += 4, static_cast<uint64_t>(depth), format::UnwindReason::kException);
      } else {
        for (int d = 0; d < depth; ++d) w->exit(t += 2 + (rng >> 61));
      }
    }
    w->exit(t += 5);
    w->end(t += 1);
    ASSERT_TRUE(w->close(true));
  }
  auto walk = [&](bool pipelined, uint64_t& records, uint64_t& ticks) {
    CallLog log;
    auto reader = format::ThreadReader::open(path);
    EXPECT_TRUE(reader) << reader.error();
    CallWalker<CallLog> walker(log);
    walker.set_probe_cost(1.5, 3.25);
    walker.subtract_pauses(true);
    ticks = 0;
    auto tick = [&](uint64_t) { ++ticks; };
    records = pipelined ? walk_thread_pipelined(*reader, walker, tick)
                        : walk_thread(*reader, walker, tick);
    return log;
  };
  uint64_t serial_records, piped_records, serial_ticks, piped_ticks;
  CallLog serial = walk(false, serial_records, serial_ticks);
  CallLog piped = walk(true, piped_records, piped_ticks);
  EXPECT_EQ(piped_records, serial_records);
  EXPECT_GT(serial_records, 300000u);
  EXPECT_EQ(piped.specials, serial.specials);
  EXPECT_EQ(piped_ticks, serial_ticks);  // progress about every million records, both ways
  ASSERT_EQ(piped.calls.size(), serial.calls.size());
  for (size_t i = 0; i < serial.calls.size(); ++i)
    ASSERT_TRUE(same(piped.calls[i], serial.calls[i])) << "call " << i;
  std::filesystem::remove_all(tmpl);
}

TEST(PipelinedWalk, EmptyFile) {
  char tmpl[] = "/tmp/callmon_pipelined_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/1.0.1.events";
  {
    auto w = format::ThreadWriter::create(path, 1, 1, "1.0");
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->close(true));
  }
  auto reader = format::ThreadReader::open(path);
  ASSERT_TRUE(reader);
  CallLog log;
  CallWalker<CallLog> walker(log);
  EXPECT_EQ(walk_thread_pipelined(*reader, walker, [](uint64_t) {}), 0u);
  EXPECT_TRUE(log.calls.empty());
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace callmon::analysis
