// The flat profile (analysis/flat_profile.hpp, profile_builder.hpp) on small recordings
// written with ThreadWriter and write_process_meta: recursion not double counted, mutual
// recursion, self times, inherited frames not counted, merging by name across processes
// (ASLR'd addresses), per-thread groups, tick to ns conversion, sorting; the note on short
// functions under an unordered clock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/clock_note.hpp"
#include "analysis/graph.hpp"
#include "analysis/profile_builder.hpp"
#include "format/trace_writer.hpp"

namespace callmon::analysis {
namespace {

namespace fs = std::filesystem;

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_profile_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void process(const std::string& key, uint32_t pid,
               std::vector<std::pair<uint64_t, std::string>> symbols, double tps = 1e9) {
    format::ProcessMeta m;
    m.key = key;
    m.pid = pid;
    m.ppid = 1;
    m.exe = "/bin/test";
    m.clock_kind = "tsc";
    m.ticks_per_second = tps;
    ASSERT_TRUE(format::write_process_meta(dir_ + "/" + key + ".meta", m, symbols).ok());
  }

  void thread(const std::string& key, uint32_t pid, uint32_t tid,
              const std::function<void(format::ThreadWriter&)>& body) {
    std::string path = dir_ + "/" + key + "." + std::to_string(tid) + ".events";
    auto w = format::ThreadWriter::create(path, pid, tid, key);
    ASSERT_TRUE(w.ok()) << w.error();
    body(*w);
    ASSERT_TRUE(w->close(true).ok());
  }

  Profile build(GroupBy group = GroupBy::kNone) {
    auto rec = format::open_recording(dir_);
    EXPECT_TRUE(rec.ok()) << rec.error();
    ProfileOptions o;
    o.group_by = group;
    auto p = build_profile(*rec, o);
    EXPECT_TRUE(p.ok()) << p.error();
    return std::move(p).value();
  }

  static const FunctionRow& row(const std::vector<FunctionRow>& rows, const std::string& name) {
    for (const FunctionRow& r : rows)
      if (r.name == name) return r;
    ADD_FAILURE() << "no row " << name;
    static FunctionRow none;
    return none;
  }

  std::string dir_;
};

TEST_F(ProfileTest, RecursionTotalIsNotDoubleCounted) {
  process("10.0", 10, {{0x1000, "main"}, {0x1100, "fact"}});
  thread("10.0", 10, 10, [](format::ThreadWriter& w) {
    w.enter(0, 0x1000);
    w.enter(10, 0x1100);
    w.enter(20, 0x1100);
    w.enter(30, 0x1100);
    w.exit(40);
    w.exit(60);
    w.exit(100);
    w.exit(110);
    w.end(110);
  });
  Profile p = build();
  const FunctionRow& fact = row(p.functions, "fact");
  EXPECT_EQ(fact.calls, 3u);
  EXPECT_DOUBLE_EQ(fact.total_ns, 90);  // not 10 + 40 + 90
  EXPECT_DOUBLE_EQ(fact.self_ns, 90);
  EXPECT_NEAR(fact.avg_ns(), 140.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(fact.min_ns, 10);
  EXPECT_DOUBLE_EQ(fact.max_ns, 90);
  EXPECT_DOUBLE_EQ(row(p.functions, "main").self_ns, 20);
  EXPECT_EQ(p.total_calls, 4u);
}

TEST_F(ProfileTest, MutualRecursion) {
  process("10.0", 10, {{0x1000, "main"}, {0x1100, "a"}, {0x1200, "b"}});
  thread("10.0", 10, 10, [](format::ThreadWriter& w) {
    w.enter(0, 0x1000);
    w.enter(10, 0x1100);  // a
    w.enter(20, 0x1200);  // b
    w.enter(30, 0x1100);  // a
    w.exit(40);           // a 10
    w.exit(60);           // b 40, self 30
    w.exit(90);           // a 80, self 40
    w.exit(100);
    w.end(100);
  });
  Profile p = build();
  const FunctionRow& a = row(p.functions, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_DOUBLE_EQ(a.total_ns, 80);
  EXPECT_DOUBLE_EQ(a.self_ns, 50);
  const FunctionRow& b = row(p.functions, "b");
  EXPECT_DOUBLE_EQ(b.total_ns, 40);
  EXPECT_DOUBLE_EQ(b.self_ns, 30);
  EXPECT_DOUBLE_EQ(row(p.functions, "main").self_ns, 20);
}

TEST_F(ProfileTest, MergesProcessesByNameAndSkipsInheritedFrames) {
  process("10.0", 10, {{0x1000, "main"}, {0x1100, "work"}});
  thread("10.0", 10, 10, [](format::ThreadWriter& w) {
    w.enter(0, 0x1000);
    w.enter(10, 0x1100);
    w.fork(15, 11);
    w.exit(30);
    w.exit(40);
    w.end(40);
  });
  // The child: inherited main and work, then a call of work at another address (ASLR).
  process("11.0", 11, {{0x1000, "main"}, {0x1100, "work"}, {0x7000, "work"}});
  thread("11.0", 11, 11, [](format::ThreadWriter& w) {
    w.inherit(15, {0x1000, 0x1100});
    w.exit(20);
    w.enter(25, 0x7000);
    w.exit(75);
    w.exit(80);
    w.end(80);
  });
  Profile p = build(GroupBy::kProcess);
  EXPECT_EQ(p.processes, 2u);
  EXPECT_EQ(p.threads, 2u);
  EXPECT_EQ(p.total_calls, 3u);
  const FunctionRow& work = row(p.functions, "work");
  EXPECT_EQ(work.calls, 2u);
  EXPECT_DOUBLE_EQ(work.total_ns, 20 + 50);
  EXPECT_DOUBLE_EQ(work.min_ns, 20);
  EXPECT_DOUBLE_EQ(work.max_ns, 50);
  EXPECT_EQ(row(p.functions, "main").calls, 1u);
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[1].process_key, "11.0");
  EXPECT_EQ(p.groups[1].functions.size(), 1u);  // only the child's own call of work
}

TEST_F(ProfileTest, PerThreadGroupsAndTickConversion) {
  process("10.0", 10, {{0x1000, "main"}, {0x1100, "worker"}}, 2e9);  // 2 ticks per ns
  thread("10.0", 10, 10, [](format::ThreadWriter& w) {
    w.set_thread_name("main");
    w.enter(0, 0x1000);
    w.exit(200);
    w.end(200);
  });
  thread("10.0", 10, 12, [](format::ThreadWriter& w) {
    w.set_thread_name("pool");
    w.enter(50, 0x1100);
    w.exit(150);
    w.end(150);
  });
  Profile p = build(GroupBy::kThread);
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[1].tid, 12u);
  EXPECT_EQ(p.groups[1].thread_name, "pool");
  EXPECT_DOUBLE_EQ(row(p.groups[1].functions, "worker").total_ns, 50);
  EXPECT_DOUBLE_EQ(row(p.functions, "main").total_ns, 100);
}

TEST(ProfileSort, SortKeys) {
  std::vector<FunctionRow> rows(3);
  rows[0].name = "b";
  rows[0].calls = 5;
  rows[0].total_ns = 10;
  rows[1].name = "a";
  rows[1].calls = 1;
  rows[1].total_ns = 30;
  rows[2].name = "c";
  rows[2].calls = 5;
  rows[2].total_ns = 20;
  SortKey key;
  ASSERT_TRUE(parse_sort_key("calls", key));
  sort_functions(rows, key);
  EXPECT_EQ(rows[0].name, "b");  // tie on calls broken by name
  EXPECT_EQ(rows[1].name, "c");
  ASSERT_TRUE(parse_sort_key("total", key));
  sort_functions(rows, key);
  EXPECT_EQ(rows[0].name, "a");
  ASSERT_TRUE(parse_sort_key("name", key));
  sort_functions(rows, key);
  EXPECT_EQ(rows[2].name, "c");
  EXPECT_FALSE(parse_sort_key("bogus", key));
}

// report's note: with an unordered clock, the functions of at least 100 calls whose self time
// per call is under the probe cost in all (here 25 ns: 50 ticks at 2 GHz) are named, the
// shortest first; none with the fenced clock, without compensation or without a calibration.
TEST(ShortFunctionNote, NamesShortFunctionsUnderAnUnorderedClock) {
  format::Recording rec;
  format::ProcessRecording p;
  p.meta.clock_kind = "tsc";
  p.meta.ticks_per_second = 2e9;
  p.meta.calibrations = {format::ProbeCost{20, 50}};
  rec.processes.push_back(p);
  auto row = [](const char* name, uint64_t calls, double self_per_call) {
    FunctionRow r;
    r.name = name;
    r.calls = calls;
    r.self_ns = self_per_call * static_cast<double>(calls);
    return r;
  };
  std::vector<FunctionRow> rows = {row("mid", 1000, 200), row("leaf", 1000, 4),
                                   row("rare", 99, 1), row("small", 100, 20)};
  auto note = short_function_note(rec, rows, true);
  ASSERT_TRUE(note);
  EXPECT_EQ(*note, "recorded with the tsc clock: self times under 25 ns per call (leaf, small) "
                   "are uncertain, part of such short work runs beside the probes (see their "
                   "ranges); `callmon record --clock=tsc-fenced` times them closely");
  EXPECT_FALSE(short_function_note(rec, rows, false));
  rows.push_back(row("a", 500, 1));
  rows.push_back(row("b", 500, 2));
  EXPECT_NE(short_function_note(rec, rows, true)->find("(a, b, leaf and 1 more)"),
            std::string::npos);
  EXPECT_FALSE(short_function_note(rec, std::vector<FunctionRow>{row("mid", 1000, 200)}, true));
  // The graph's rows (html) serve as well.
  GraphFunction g;
  g.name = "leaf";
  g.calls = 1000;
  g.self_ns = 4000;
  EXPECT_TRUE(short_function_note(rec, std::vector<GraphFunction>{g}, true));
  rec.processes[0].meta.clock_kind = "tsc-fenced";
  EXPECT_FALSE(short_function_note(rec, rows, true));
  rec.processes[0].meta.clock_kind = "monotonic";
  rec.processes[0].meta.calibrations.clear();
  EXPECT_FALSE(short_function_note(rec, rows, true));
}

}  // namespace
}  // namespace callmon::analysis
