// The exports' sink beside the walk (analysis/offload_sink.hpp): it sees the same openings
// and calls, in the same order, with its own slots, as when the walk calls it directly,
// across many batches; an exception in it comes back from finish(); and the export stream
// it writes to (report/export_stream.hpp) gives the bytes written, in order, across blocks.
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/offload_sink.hpp"
#include "report/export_stream.hpp"

namespace callmon::analysis {
namespace {

// Writes down what it is given; on_enter's slot is a serial of its own.
struct LogSink {
  std::vector<std::string> log;
  uint32_t serial = 100;
  uint64_t clock = 0;
  bool throw_at_call = false;
  void on_enter_clock(uint64_t v) { clock = v; }
  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited) {
    log.push_back("enter " + std::to_string(addr) + " " + std::to_string(ticks) + " " +
                  std::to_string(depth) + " " + std::to_string(inherited) + " @" +
                  std::to_string(clock));
    return ++serial;
  }
  void on_call(const FinishedCall& c) {
    if (throw_at_call) throw std::runtime_error("sink failed");
    log.push_back("call " + std::to_string(c.addr) + " " + std::to_string(c.vstart) + " " +
                  std::to_string(c.time) + " " + std::to_string(c.depth) + " " +
                  std::to_string(static_cast<int>(c.exit)) + " " +
                  std::to_string(c.inherited) + " " + std::to_string(c.resumed) + " slot " +
                  std::to_string(c.slot));
  }
  void on_special(const format::Event&, uint32_t) {}
};

// A recursion of `n` calls deep `depth`, twice the batch size and more.
std::vector<format::Event> events(size_t calls) {
  std::vector<format::Event> out;
  uint64_t t = 1;
  size_t made = 0;
  while (made < calls) {
    for (int d = 0; d < 5 && made < calls; ++d, ++made) {
      format::Event e;
      e.type = format::Event::kEnter;
      e.ticks = t += 3;
      e.addr = 0x1000 + static_cast<uint64_t>(d) * 16 + made % 7;
      out.push_back(e);
    }
    for (int d = 0; d < 5; ++d) {
      format::Event e;
      e.type = format::Event::kExit;
      e.ticks = t += 5;
      out.push_back(e);
    }
  }
  return out;
}

template <class Sink>
void walk(Sink& sink, const std::vector<format::Event>& evs) {
  CallWalker<Sink> walker(sink);
  for (const auto& e : evs) walker.feed(e);
  walker.finish();
}

TEST(OffloadSink, SameCallsInTheSameOrderAsDirect) {
  const auto evs = events(3 * OffloadSink<LogSink>::kBatch + 123);
  LogSink direct;
  walk(direct, evs);
  LogSink inner;
  {
    OffloadSink<LogSink> beside(inner);
    walk(beside, evs);
    beside.finish();
  }
  ASSERT_EQ(inner.log.size(), direct.log.size());
  EXPECT_EQ(inner.log, direct.log);
}

TEST(OffloadSink, UnfinishedCallsAndAnEmptyWalk) {
  LogSink inner;
  {
    OffloadSink<LogSink> beside(inner);
    beside.finish();
  }
  EXPECT_TRUE(inner.log.empty());
  auto evs = events(10);
  evs.resize(evs.size() - 3);  // three calls still open: the walk ends them as unfinished
  LogSink direct;
  walk(direct, evs);
  LogSink offloaded;
  {
    OffloadSink<LogSink> beside(offloaded);
    walk(beside, evs);
    beside.finish();
  }
  EXPECT_EQ(offloaded.log, direct.log);
}

// A ucontext switch: a suspended call taken up again is handed on as resumed (the exports
// beside the walk mark it `continued`).
TEST(OffloadSink, ContinuationsKeepTheirResumedMark) {
  std::vector<format::Event> evs;
  auto add = [&](format::Event::Type type, uint64_t t, uint64_t addr, uint64_t count,
                 uint32_t reason) {
    format::Event e;
    e.type = type;
    e.ticks = t;
    e.addr = addr;
    e.count = count;
    e.reason = reason;
    evs.push_back(e);
  };
  add(format::Event::kEnter, 10, 0x1000, 0, 0);
  add(format::Event::kUnwind, 20, 0, 1, 4);  // suspended
  add(format::Event::kEnter, 20, 0x2000, 0, 0);
  add(format::Event::kUnwind, 30, 0, 1, 4);
  add(format::Event::kInherit, 30, 0x1000, 0, 0);  // resumed
  add(format::Event::kExit, 40, 0, 0, 0);
  LogSink direct;
  walk(direct, evs);
  LogSink offloaded;
  {
    OffloadSink<LogSink> beside(offloaded);
    walk(beside, evs);
    beside.finish();
  }
  EXPECT_EQ(offloaded.log, direct.log);
  ASSERT_FALSE(direct.log.empty());
  EXPECT_NE(direct.log.back().find(" 1 1 slot"), std::string::npos) << direct.log.back();
}

// Takes whole batches (BatchSink): logs each record as LogSink logs the calls it is
// given, keeping its own slots by depth, so that its log can be compared with LogSink's.
struct BatchLogSink {
  std::vector<std::string> log;
  std::vector<uint32_t> slots;
  uint32_t serial = 100;
  size_t batches = 0;
  void on_offloaded(const OffloadRecord* r, size_t n) {
    ++batches;
    for (size_t i = 0; i < n; ++i) {
      if (r[i].kind == OffloadRecord::kEnter) {
        log.push_back("enter " + std::to_string(r[i].addr) + " " + std::to_string(r[i].b) +
                      " " + std::to_string(r[i].depth) + " " + std::to_string(r[i].inherited) +
                      " @" + std::to_string(r[i].a));
        if (slots.size() <= r[i].depth) slots.resize(r[i].depth + 1);
        slots[r[i].depth] = ++serial;
      } else {
        log.push_back("call " + std::to_string(r[i].addr) + " " + std::to_string(r[i].a) + " " +
                      std::to_string(r[i].b) + " " + std::to_string(r[i].depth) + " " +
                      std::to_string(static_cast<int>(r[i].exit)) + " " +
                      std::to_string(r[i].inherited) + " " + std::to_string(r[i].resumed) +
                      " slot " + std::to_string(slots.at(r[i].depth)));
      }
    }
  }
  // Never called: the batches go to on_offloaded.
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { throw std::logic_error("on_enter"); }
  void on_call(const FinishedCall&) { throw std::logic_error("on_call"); }
  void on_special(const format::Event&, uint32_t) {}
};
static_assert(BatchSink<BatchLogSink>);
static_assert(!BatchSink<LogSink>);

TEST(OffloadSink, ABatchSinkGetsEveryRecordInOrder) {
  const auto evs = events(3 * OffloadSink<LogSink>::kBatch + 123);
  LogSink direct;
  walk(direct, evs);
  BatchLogSink inner;
  {
    OffloadSink<BatchLogSink> beside(inner);
    walk(beside, evs);
    beside.finish();
  }
  EXPECT_GE(inner.batches, 6u);  // every call is two records: 6 full batches and a part
  ASSERT_EQ(inner.log.size(), direct.log.size());
  EXPECT_EQ(inner.log, direct.log);
}

TEST(OffloadSink, TheSinksExceptionComesBackFromFinish) {
  LogSink inner;
  inner.throw_at_call = true;
  OffloadSink<LogSink> beside(inner);
  walk(beside, events(2 * OffloadSink<LogSink>::kBatch));  // the walk never waits forever
  EXPECT_THROW(beside.finish(), std::runtime_error);
}

}  // namespace
}  // namespace callmon::analysis

namespace callmon::report {
namespace {

TEST(ExportStream, BlocksInOrder) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::string expected;
  {
    ExportStream out(f);
    for (int i = 0; i < 200000; ++i) {
      const std::string piece = std::to_string(i) + (i % 1000 == 0 ? std::string(70000, 'x') : ",");
      expected += piece;
      if (i % 2) {
        out.write(piece);
      } else {
        char* p = out.room(piece.size());
        std::copy(piece.begin(), piece.end(), p);
        out.commit(p + piece.size());
      }
    }
    ASSERT_TRUE(out.finish());
  }
  std::rewind(f);
  std::string got(expected.size() + 1, '\0');
  got.resize(std::fread(got.data(), 1, got.size(), f));
  std::fclose(f);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

TEST(ExportStream, SmallOutputAndAFailedWrite) {
  std::FILE* f = std::tmpfile();
  {
    ExportStream out(f);
    out.write("{}");
    EXPECT_TRUE(out.finish());
  }
  std::fclose(f);
  std::FILE* full = std::fopen("/dev/full", "w");
  if (full == nullptr) GTEST_SKIP() << "no /dev/full";
  {
    ExportStream out(full);
    for (int i = 0; i < 100000; ++i) out.write("0123456789");
    EXPECT_FALSE(out.finish());
  }
  std::fclose(full);
}

}  // namespace
}  // namespace callmon::report
