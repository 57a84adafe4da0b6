// The replay printer (report/replay_printer.hpp) fed by the call walk: leaf vs. opening
// lines decided with one record of lookahead, closing lines, exit marks, inherited frames,
// special lines, --max-depth, and C++ names keeping their parameter list.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/call_walk.hpp"
#include "report/replay_printer.hpp"

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

// Runs `events` through a ReplayPrinter and returns what it printed.
std::string replay(const std::vector<Event>& events, uint32_t max_depth = 0) {
  format::ProcessMeta meta;
  meta.key = "1.0";
  meta.ticks_per_second = 1e9;
  meta.symbols = {{0x10, "main"}, {0x20, "f(int)"}, {0x30, "g"}};
  analysis::ProcessSymbolizer sym(meta, analysis::make_elf_cache());
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  {
    ReplayPrinter printer(out, meta, sym, max_depth);
    analysis::CallWalker<ReplayPrinter> walker(printer);
    for (const Event& e : events) walker.feed(e);
    walker.finish();
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

}  // namespace
}  // namespace callmon::report
