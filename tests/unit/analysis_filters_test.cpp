// Unit tests of the filter layer (analysis/filters.hpp): FilteredSink between a CallWalker
// and a recording sink, on the call tree of tests/traces/simple.txt:
//   main 0..120 { parse 10..30; compute 40..100 { helper 50..60; helper 70..90 } }
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/filters.hpp"

namespace callmon::analysis {
namespace {

constexpr uint64_t kMain = 0x1000, kParse = 0x1100, kCompute = 0x1200, kHelper = 0x1300;

struct Seen {
  uint64_t addr;
  uint64_t time;
  int64_t self;
  uint32_t depth;
};

struct RecordingSink {
  std::vector<Seen> calls;
  std::vector<uint32_t> enter_depths;
  uint32_t on_enter(uint64_t, uint64_t, uint32_t depth, bool) {
    enter_depths.push_back(depth);
    return 0;
  }
  void on_call(const FinishedCall& c) {
    calls.push_back({c.addr, c.time, static_cast<int64_t>(c.self), c.depth});
  }
  void on_special(const format::Event&, uint32_t) {}
};

format::Event enter(uint64_t t, uint64_t addr) {
  format::Event ev;
  ev.type = format::Event::kEnter;
  ev.ticks = t;
  ev.addr = addr;
  return ev;
}
format::Event exit_at(uint64_t t) {
  format::Event ev;
  ev.type = format::Event::kExit;
  ev.ticks = t;
  return ev;
}

class FiltersTest : public ::testing::Test {
 protected:
  FiltersTest() {
    meta_.ticks_per_second = 1e9;
    meta_.symbols = {{kMain, "main"}, {kParse, "parse"}, {kCompute, "compute"},
                     {kHelper, "helper"}};
  }

  std::vector<Seen> run(const FilterSet& f) {
    ProcessSymbolizer sym(meta_, make_elf_cache());
    NameDecider names(f, sym);
    FilteredSink<RecordingSink> filtered(sink_, f, names, meta_);
    CallWalker<FilteredSink<RecordingSink>> walker(filtered);
    for (const format::Event& ev :
         {enter(0, kMain), enter(10, kParse), exit_at(30), enter(40, kCompute),
          enter(50, kHelper), exit_at(60), enter(70, kHelper), exit_at(90), exit_at(100),
          exit_at(120)})
      walker.feed(ev);
    walker.finish();
    return sink_.calls;
  }

  format::ProcessMeta meta_;
  RecordingSink sink_;
};

TEST_F(FiltersTest, NoFilterPassesEverythingThrough) {
  auto calls = run(FilterSet{});
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls.back().addr, kMain);
  EXPECT_EQ(calls.back().self, 40);
}

TEST_F(FiltersTest, ExcludedCallGivesItsTimeToTheParentAndKeepsItsChildren) {
  FilterSet f;
  f.exclude = std::regex("compute");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[1].addr, kHelper);
  EXPECT_EQ(calls[1].depth, 1u);  // directly under main now
  EXPECT_EQ(calls[3].addr, kMain);
  EXPECT_EQ(calls[3].self, 120 - 20 - 10 - 20);
}

TEST_F(FiltersTest, MinDurationDropsShortCallsOnly) {
  FilterSet f;
  f.min_duration_ns = 15;
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 4u);  // the 10 ns helper is gone
  EXPECT_EQ(calls[1].addr, kHelper);
  EXPECT_EQ(calls[1].time, 20u);
  EXPECT_EQ(calls[2].addr, kCompute);
  EXPECT_EQ(calls[2].self, 60 - 20);
  // Entered in tree order once proven long enough: main, parse, compute, helper.
  EXPECT_EQ(sink_.enter_depths, (std::vector<uint32_t>{0, 1, 1, 2}));
}

TEST_F(FiltersTest, TimeRangeKeepsOverlappingCalls) {
  FilterSet f;
  f.range_ns = std::make_pair(uint64_t{35}, uint64_t{65});
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 3u);  // parse ends at 30, the second helper starts at 70
  EXPECT_EQ(calls[0].addr, kHelper);
  EXPECT_EQ(calls[1].addr, kCompute);
  EXPECT_EQ(calls[1].self, 50);
  EXPECT_EQ(calls[2].self, 60);
}

TEST_F(FiltersTest, MaxDepthAndIncludeCombine) {
  FilterSet f;
  f.max_depth = 2;
  f.include = std::regex("^(main|compute)$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].addr, kCompute);
  EXPECT_EQ(calls[0].self, 60);
  EXPECT_EQ(calls[1].self, 60);
}

// --focus (uftrace -F): the matching call and its whole subtree, the match at depth 0.
TEST_F(FiltersTest, FocusKeepsTheMatchWithItsSubtree) {
  FilterSet f;
  f.focus = std::regex("^compute$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].addr, kHelper);
  EXPECT_EQ(calls[0].depth, 1u);
  EXPECT_EQ(calls[2].addr, kCompute);
  EXPECT_EQ(calls[2].depth, 0u);
  EXPECT_EQ(calls[2].self, 60 - 10 - 20);  // its callees are kept: its own self only
  EXPECT_EQ(sink_.enter_depths, (std::vector<uint32_t>{0, 1, 1}));
}

// Unlike --include, which keeps only the matching calls themselves.
TEST_F(FiltersTest, IncludeKeepsOnlyTheMatchWhereFocusKeepsTheSubtree) {
  FilterSet f;
  f.include = std::regex("^compute$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].self, 60);
}

// --callee-of: what the match calls, not the match.
TEST_F(FiltersTest, CalleeOfKeepsTheCalleesWithoutTheMatch) {
  FilterSet f;
  f.callee_of = std::regex("^main$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 4u);  // parse, helper, helper, compute
  EXPECT_EQ(calls[0].addr, kParse);
  EXPECT_EQ(calls[0].depth, 0u);
  EXPECT_EQ(calls[3].addr, kCompute);
  EXPECT_EQ(calls[3].depth, 0u);
  EXPECT_EQ(calls[1].depth, 1u);
}

// --hide (uftrace -N): the match and its subtree go, their time to the caller's self.
TEST_F(FiltersTest, HideDropsTheMatchWithItsSubtree) {
  FilterSet f;
  f.hide = std::regex("^compute$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 2u);  // parse, main: both helpers went with compute
  EXPECT_EQ(calls[0].addr, kParse);
  EXPECT_EQ(calls[1].addr, kMain);
  EXPECT_EQ(calls[1].self, 120 - 20);
}

// --caller-of (uftrace -C): the match and its callers; held back until the match starts.
TEST_F(FiltersTest, CallerOfKeepsTheMatchAndItsCallers) {
  FilterSet f;
  f.caller_of = std::regex("^helper$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 4u);  // helper, helper, compute, main: parse calls no helper
  EXPECT_EQ(calls[0].addr, kHelper);
  EXPECT_EQ(calls[0].depth, 2u);
  EXPECT_EQ(calls[2].addr, kCompute);
  EXPECT_EQ(calls[3].addr, kMain);
  EXPECT_EQ(calls[3].self, 120 - 60);  // parse's time is main's now
  EXPECT_EQ(sink_.enter_depths, (std::vector<uint32_t>{0, 1, 2, 2}));
}

// A match's own callees are not callers: --caller-of=compute drops the helpers.
TEST_F(FiltersTest, CallerOfDropsTheMatchsCallees) {
  FilterSet f;
  f.caller_of = std::regex("^compute$");
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].addr, kCompute);
  EXPECT_EQ(calls[0].self, 60);
  EXPECT_EQ(calls[1].addr, kMain);
}

// Focus filters combine with the others: --caller-of with --min-duration keeps the
// callers of the long helper only.
TEST_F(FiltersTest, CallerOfCombinesWithMinDuration) {
  FilterSet f;
  f.caller_of = std::regex("^helper$");
  f.min_duration_ns = 15;
  auto calls = run(f);
  ASSERT_EQ(calls.size(), 3u);  // the 20 ns helper, compute, main
  EXPECT_EQ(calls[0].time, 20u);
  EXPECT_EQ(calls[1].addr, kCompute);
  EXPECT_EQ(calls[2].addr, kMain);
  EXPECT_EQ(sink_.enter_depths, (std::vector<uint32_t>{0, 1, 2}));
}

// Nothing matches: nothing is kept, nothing is left pending.
TEST_F(FiltersTest, FocusFiltersMatchingNothingKeepNothing) {
  for (int which = 0; which < 3; ++which) {
    FilterSet f;
    (which == 0 ? f.focus : which == 1 ? f.callee_of : f.caller_of) = std::regex("nosuch");
    sink_ = RecordingSink{};
    EXPECT_TRUE(run(f).empty()) << which;
  }
}

// Names are matched without a template function's return type (and demangled when the
// symbolizer gave the mangled name): '^std::' excludes std::sort, whose demangled name
// begins with "void ".
TEST(FilterNames, MatchWithoutReturnType) {
  FilterSet f;
  f.exclude = std::regex("^std::");
  EXPECT_FALSE(f.keeps_name("void std::sort<int*>(int*, int*)"));
  EXPECT_FALSE(f.keeps_name("_ZSt4sortIPiEvT_S1_"));
  EXPECT_FALSE(f.keeps_name("std::vector<int, std::allocator<int> >::size() const"));
  EXPECT_TRUE(f.keeps_name("void shop::sort<std::less<int> >(int*)"));
  EXPECT_TRUE(f.keeps_name("main"));
  FilterSet g;
  g.include = std::regex("^shop::twice");
  EXPECT_TRUE(g.keeps_name("double shop::twice<double>(double)"));
  EXPECT_FALSE(g.keeps_name("std::twice()"));
}

// --min-duration's value (record, report, replay, graph, export): ns, or with a unit.
TEST(FilterParsing, Durations) {
  EXPECT_EQ(parse_duration("2500").value(), 2500u);
  EXPECT_EQ(parse_duration("250ns").value(), 250u);
  EXPECT_EQ(parse_duration("250us").value(), 250000u);
  EXPECT_EQ(parse_duration("1.5ms").value(), 1500000u);
  EXPECT_EQ(parse_duration("2s").value(), 2000000000u);
  for (const char* bad : {"", "us", "1.2.3ms", "-3", "10xs", "1 ms", "1e3"}) {
    auto got = parse_duration(bad);
    ASSERT_FALSE(got) << bad;
    EXPECT_NE(got.error().find("bad duration"), std::string::npos) << got.error();
  }
}

TEST(FilterParsing, TimeRangeAndRegexErrors) {
  EXPECT_TRUE(parse_time_range("10:20"));
  EXPECT_EQ(parse_time_range(":20")->first, 0u);
  EXPECT_EQ(parse_time_range("5:")->second, UINT64_MAX);
  EXPECT_FALSE(parse_time_range("20:10"));
  EXPECT_FALSE(parse_time_range("abc"));
  EXPECT_FALSE(parse_time_range("1:x"));
  EXPECT_FALSE(compile_filter_regex("(unclosed"));
  EXPECT_TRUE(compile_filter_regex("^main$"));
}

// START..END with units (export's selection, docs/filters.md).
TEST(FilterParsing, TimeRangeWithUnits) {
  auto r = parse_time_range("10ms..1.5s");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 10'000'000u);
  EXPECT_EQ(r->second, 1'500'000'000u);
  EXPECT_EQ(parse_time_range("250us..")->first, 250'000u);
  EXPECT_EQ(parse_time_range("250us..")->second, UINT64_MAX);
  EXPECT_EQ(parse_time_range("..2s")->first, 0u);
  EXPECT_EQ(parse_time_range("35ns..0.065us")->second, 65u);
  EXPECT_EQ(parse_time_range("1.5ms:2ms")->first, 1'500'000u);
  EXPECT_EQ(parse_time_range("18446744073709551615..")->first, UINT64_MAX);  // whole ns, exact
  EXPECT_FALSE(parse_time_range("2s..1s"));
  EXPECT_FALSE(parse_time_range("1h..2h"));
  EXPECT_FALSE(parse_time_range("1.2.3s..4s"));
  EXPECT_FALSE(parse_time_range("ms..1s"));
  EXPECT_FALSE(parse_time_range("10ms"));
}

}  // namespace
}  // namespace callmon::analysis
