// Duration colours (report/colour.hpp) and replay's terminal additions: the column header,
// the TID column and coloured durations (report/replay_printer.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "analysis/call_walk.hpp"
#include "report/colour.hpp"
#include "report/replay_printer.hpp"

namespace callmon::report {
namespace {

TEST(Colour, DurationsColouredBySize) {
  EXPECT_STREQ(duration_colour(999), "");
  EXPECT_STREQ(duration_colour(1e3), "\033[33m");
  EXPECT_STREQ(duration_colour(999e3), "\033[33m");
  EXPECT_STREQ(duration_colour(1e6), "\033[31m");
  EXPECT_STREQ(duration_colour(1e9), "\033[1;31m");
}

TEST(Colour, PaintKeepsThePaddingOutside) {
  EXPECT_EQ(paint_duration("  2.0 ms", 2e6, true), "  \033[31m2.0 ms\033[0m");
  EXPECT_EQ(paint_duration("  2.0 ms", 2e6, false), "  2.0 ms");
  EXPECT_EQ(paint_duration("  50 ns", 50, true), "  50 ns");  // below 1 us: as is
  EXPECT_EQ(paint_duration("        ", 2e6, true), "        ");
  EXPECT_EQ(paint_header("x", true), "\033[1mx\033[0m");
  EXPECT_EQ(paint_header("x", false), "x");
}

format::Event make(format::Event::Type type, uint64_t ticks, uint64_t addr = 0) {
  format::Event e;
  e.type = type;
  e.ticks = ticks;
  e.addr = addr;
  return e;
}

// main 0..3 ms { f 10..2 000 010 } printed with colour and the TID column.
std::string replay_coloured(bool colour, uint32_t tid) {
  format::ProcessMeta meta;
  meta.key = "1.0";
  meta.ticks_per_second = 1e9;
  meta.symbols = {{0x10, "main"}, {0x20, "f"}};
  analysis::ProcessSymbolizer sym(meta, analysis::make_elf_cache());
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  {
    ReplayPrinter printer(out, meta, sym, 0);
    printer.set_colour(colour);
    printer.set_thread_column(tid);
    analysis::CallWalker<ReplayPrinter> walker(printer);
    using format::Event;
    for (const Event& e : {make(Event::kEnter, 0, 0x10), make(Event::kEnter, 10, 0x20),
                           make(Event::kExit, 2'000'010), make(Event::kExit, 3'000'000)})
      walker.feed(e);
    walker.finish();
  }
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

TEST(ReplayTerminal, HeaderLine) {
  EXPECT_EQ(replay_column_header(false), "#   DURATION | FUNCTION");
  EXPECT_EQ(replay_column_header(true), "#   DURATION      TID  | FUNCTION");
}

TEST(ReplayTerminal, TidColumnAndColours) {
  EXPECT_EQ(replay_coloured(false, 0),
            "             | main() {\n"
            "    2.000 ms |   f();\n"
            "    3.000 ms | } /* main() */\n");
  EXPECT_EQ(replay_coloured(true, 4242),
            "             [   4242] | main() {\n"
            "    \033[31m2.000 ms\033[0m [   4242] |   f();\n"
            "    \033[31m3.000 ms\033[0m [   4242] | } /* main() */\n");
}

}  // namespace
}  // namespace callmon::report
