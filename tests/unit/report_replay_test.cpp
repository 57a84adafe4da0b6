// The replay printer (report/replay_printer.hpp) fed by the call walk: leaf vs. opening
// lines decided with one record of lookahead, closing lines, exit marks, inherited frames,
// special lines, --max-depth, and C++ names keeping their parameter list (--demangle=full;
// short names by default); recorded argument and return values (uftrace style), also when
// they come late or through filters.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/filters.hpp"
#include "format/arg_values.hpp"
#include "report/replay_printer.hpp"
#include "report/shown_names.hpp"

namespace callmon::report {
namespace {

using format::Event;

Event make(Event::Type type, uint64_t ticks, uint64_t addr = 0, uint64_t count = 0,
           uint32_t reason = 0) {
  Event e;
  e.type = type;
  e.ticks = ticks;
  e.addr = addr;
  e.count = count;
  e.reason = reason;
  return e;
}

// Runs `events` through a ReplayPrinter (behind a FilteredSink when `filters` is given)
// and returns what it printed.
std::string replay(const std::vector<Event>& events, uint32_t max_depth = 0,
                   const analysis::FilterSet* filters = nullptr,
                   analysis::NameStyle style = analysis::NameStyle::full) {
  set_name_style(style);
  format::ProcessMeta meta;
  meta.key = "1.0";
  meta.ticks_per_second = 1e9;
  meta.symbols = {{0x10, "main"},
                  {0x20, "f(int)"},
                  {0x30, "g"},
                  {0x40, "std::vector<int, std::allocator<int> >::push_back(int const&)"},
                  {0x50, "void std::sort<int*>(int*, int*)"}};
  analysis::ProcessSymbolizer sym(meta, analysis::make_elf_cache());
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  {
    ReplayPrinter printer(out, meta, sym, max_depth);
    if (filters) {
      analysis::NameDecider names(*filters, sym);
      analysis::FilteredSink<ReplayPrinter> filtered(printer, *filters, names, meta);
      analysis::CallWalker<analysis::FilteredSink<ReplayPrinter>> walker(filtered);
      for (const Event& e : events) walker.feed(e);
      walker.finish();
    } else {
      analysis::CallWalker<ReplayPrinter> walker(printer);
      for (const Event& e : events) walker.feed(e);
      walker.finish();
    }
  }
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

TEST(ReplayPrinter, LeavesOpeningsAndClosings) {
  std::string got = replay({make(Event::kEnter, 0, 0x10), make(Event::kEnter, 10, 0x20),
                            make(Event::kExit, 20), make(Event::kEnter, 30, 0x30),
                            make(Event::kEnter, 40, 0x20), make(Event::kExit, 1240),
                            make(Event::kExit, 1250), make(Event::kExit, 1300),
                            make(Event::kEnd, 1300)});
  EXPECT_EQ(got,
            "             | main() {\n"
            "     10.0 ns |   f(int);\n"
            "             |   g() {\n"
            "    1.200 us |     f(int);\n"
            "    1.220 us |   } /* g() */\n"
            "    1.300 us | } /* main() */\n");
}

// By default names are short: no parameters, template arguments elided, no return type;
// "()" marks the call as for C functions.
TEST(ReplayPrinter, ShortNames) {
  std::string got = replay({make(Event::kEnter, 0, 0x10), make(Event::kEnter, 10, 0x40),
                            make(Event::kEnter, 20, 0x50), make(Event::kExit, 30),
                            make(Event::kExit, 40), make(Event::kEnter, 50, 0x20),
                            make(Event::kExit, 60), make(Event::kExit, 70),
                            make(Event::kEnd, 70)},
                           0, nullptr, analysis::NameStyle::short_form);
  EXPECT_EQ(got,
            "             | main() {\n"
            "             |   std::vector<...>::push_back() {\n"
            "     10.0 ns |     std::sort<...>();\n"
            "     30.0 ns |   } /* std::vector<...>::push_back() */\n"
            "     10.0 ns |   f();\n"
            "     70.0 ns | } /* main() */\n");
}

TEST(ReplayPrinter, MarksInheritedAndSpecials) {
  std::string got = replay({make(Event::kInherit, 5, 0x10), make(Event::kFork, 6, 0, 77),
                            make(Event::kEnter, 7, 0x20), make(Event::kLost, 8, 0, 3),
                            make(Event::kUnwind, 9, 0, 1, 1), make(Event::kEnter, 10, 0x30)});
  EXPECT_EQ(got,
            "             | main() { [inherited]\n"
            "# fork child 77\n"
            "             |   f(int) {\n"
            "# lost 3 events\n"
            "      2.0 ns |   } /* f(int) */ [exception]\n"
            "      0.0 ns |   g(); [cut]\n"
            "      5.0 ns | } /* main() */ [cut]\n");
}

TEST(ReplayPrinter, MaxDepthHidesDeeperCalls) {
  std::string got = replay({make(Event::kEnter, 0, 0x10), make(Event::kEnter, 10, 0x20),
                            make(Event::kEnter, 20, 0x30), make(Event::kExit, 30),
                            make(Event::kExit, 40), make(Event::kExit, 50),
                            make(Event::kEnd, 50)},
                           2);
  EXPECT_EQ(got,
            "             | main() {\n"
            "     30.0 ns |   f(int);\n"
            "     50.0 ns | } /* main() */\n");
}

// Payloads of the value events below; they must outlive the events.
std::vector<std::vector<uint8_t>> g_payloads;

Event value_event(Event::Type type, uint64_t ticks, std::vector<format::ArgValue> values,
                  bool nested = false) {
  g_payloads.push_back(format::encode_arg_values(values));
  Event e = make(type, ticks);
  e.nested = nested;
  e.data = g_payloads.back().data();
  e.size = static_cast<uint32_t>(g_payloads.back().size());
  return e;
}

format::ArgValue i32(int32_t v, uint8_t pos) {
  format::ArgValue a;
  a.format = format::ArgFormat::kI32;
  a.position = pos;
  a.bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  return a;
}

Event args(uint64_t t, std::vector<format::ArgValue> v, bool nested = false) {
  return value_event(Event::kArgs, t, std::move(v), nested);
}
Event retval(uint64_t t, int32_t v, bool nested = false) {
  return value_event(Event::kRetval, t, {i32(v, 0)}, nested);
}

TEST(ReplayPrinter, ArgumentsAndReturnValues) {
  g_payloads.reserve(64);
  Event nested_enter = make(Event::kEnter, 45, 0x30);
  nested_enter.nested = true;
  Event nested_exit = make(Event::kExit, 46);
  nested_exit.nested = true;
  std::string got = replay({make(Event::kEnter, 0, 0x10), args(0, {i32(2, 2), i32(1, 1)}),
                            make(Event::kEnter, 10, 0x20), args(10, {i32(-3, 1)}),
                            make(Event::kExit, 20), retval(20, 9),
                            make(Event::kEnter, 30, 0x30),  // no values
                            make(Event::kEnter, 40, 0x20), args(40, {i32(4, 1)}),
                            nested_enter, args(45, {i32(5, 1)}, true), nested_exit,
                            retval(46, 6, true), make(Event::kExit, 50), retval(50, 16),
                            make(Event::kExit, 60), make(Event::kEnter, 70, 0x20),
                            make(Event::kUnwind, 80, 0, 1, 1),
                            retval(80, 7),  // after an exception: belongs to no call
                            make(Event::kExit, 90), retval(90, 0), make(Event::kEnd, 90)});
  EXPECT_EQ(got,
            "             | main(1, 2) {\n"
            "     10.0 ns |   f(-3) = 9;\n"
            "             |   g() {\n"
            "             |     f(4) {\n"
            "      1.0 ns |       g(5) = 6;\n"
            "     10.0 ns |     } = 16; /* f(int) */\n"
            "     30.0 ns |   } /* g() */\n"
            "     10.0 ns |   f(int); [exception]\n"
            "     90.0 ns | } = 0; /* main() */\n");
}

TEST(ReplayPrinter, LateValuesGetTheirOwnLines) {
  g_payloads.reserve(64);
  Event nested_enter = make(Event::kEnter, 12, 0x30);
  nested_enter.nested = true;
  Event nested_exit = make(Event::kExit, 13);
  nested_exit.nested = true;
  Event nested_enter2 = make(Event::kEnter, 21, 0x30);
  nested_enter2.nested = true;
  Event nested_exit2 = make(Event::kExit, 22);
  nested_exit2.nested = true;
  std::string got = replay({make(Event::kEnter, 10, 0x20), nested_enter, nested_exit,
                            args(13, {i32(8, 1)}), make(Event::kExit, 20), nested_enter2,
                            nested_exit2, retval(22, 64)});
  EXPECT_EQ(got,
            "             | f(int) {\n"
            "      1.0 ns |   g();\n"
            "             |   /* arguments: f(8) */\n"
            "     10.0 ns | } /* f(int) */\n"
            "      1.0 ns | g();\n"
            "             | /* f(int) = 64 */\n");
}

TEST(ReplayPrinter, ValuesFollowTheirCallsThroughFilters) {
  g_payloads.reserve(64);
  analysis::FilterSet min;
  min.min_duration_ns = 15;  // f (10 ns) is dropped, main and the long f held then kept
  std::string got = replay({make(Event::kEnter, 0, 0x10), args(0, {i32(1, 1)}),
                            make(Event::kEnter, 10, 0x20), args(10, {i32(2, 1)}),
                            make(Event::kExit, 20), retval(20, 3),
                            make(Event::kEnter, 30, 0x20), args(30, {i32(4, 1)}),
                            make(Event::kExit, 50), retval(50, 5), make(Event::kExit, 60),
                            retval(60, 6), make(Event::kEnd, 60)},
                           0, &min);
  EXPECT_EQ(got,
            "             | main(1) {\n"
            "     20.0 ns |   f(4) = 5;\n"
            "     60.0 ns | } = 6; /* main() */\n");
  analysis::FilterSet exclude;
  exclude.exclude = std::regex("^f");
  got = replay({make(Event::kEnter, 0, 0x10), args(0, {i32(1, 1)}),
                make(Event::kEnter, 10, 0x20), args(10, {i32(2, 1)}), make(Event::kExit, 20),
                retval(20, 3), make(Event::kExit, 60), retval(60, 6)},
               0, &exclude);
  EXPECT_EQ(got, "     60.0 ns | main(1) = 6;\n");
}

TEST(ReplayPrinter, ValuesOfHiddenCallsAreNotShown) {
  g_payloads.reserve(64);
  std::string got = replay({make(Event::kEnter, 0, 0x10), args(0, {i32(1, 1)}),
                            make(Event::kEnter, 10, 0x20), args(10, {i32(2, 1)}),
                            make(Event::kExit, 20), retval(20, 3), make(Event::kExit, 30),
                            retval(30, 4)},
                           1);
  EXPECT_EQ(got, "     30.0 ns | main(1) = 4;\n");
}

}  // namespace
}  // namespace callmon::report
