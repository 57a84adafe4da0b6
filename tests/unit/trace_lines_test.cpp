// The line layout of `callmon trace` (tools/trace/trace_lines.hpp): indentation, thread id,
// timestamps, durations with leaf calls on one line, and the marks of non-normal exits.
#include <gtest/gtest.h>

#include "tools/trace/trace_lines.hpp"

using namespace callmon::trace;

namespace {

struct Capture {
  std::string text;
  int writes = 0;
  ThreadPrinter::Sink sink() {
    return [this](const std::string& line) {
      text += line;
      ++writes;
    };
  }
};

}  // namespace

TEST(TraceLines, PlainWritesEachEntryAtOnce) {
  Capture c;
  ThreadPrinter p({true, false, false}, 77, c.sink());
  p.enter("main", 0, 0);
  EXPECT_EQ(c.text, "[77] main()\n");  // not held back: a crash right now still shows it
  p.enter("f(int)", 1, 0);
  p.exit("f(int)", 1, 0, 10, ExitMark::kNormal);
  p.enter("g", 1, 0);
  p.exit("g", 1, 0, 10, ExitMark::kException);
  p.exit("main", 0, 0, 10, ExitMark::kLongjmp);
  EXPECT_EQ(c.text,
            "[77] main()\n"
            "[77]   f(int)\n"
            "[77]   g()\n"
            "[77]   <- g() [exception]\n"
            "[77] <- main() [longjmp]\n");
  EXPECT_EQ(c.writes, 5);
}

TEST(TraceLines, DurationsPutLeavesOnOneLine) {
  Capture c;
  ThreadPrinter p({false, true, true}, 1, c.sink());
  p.enter("main", 0, 0.5);
  EXPECT_EQ(c.text, "");
  p.enter("leaf", 1, 0.75);
  p.exit("leaf", 1, 0.8, 1234, ExitMark::kNormal);
  p.enter("thrower", 1, 1.0);
  p.exit("thrower", 1, 1.1, 5, ExitMark::kException);
  p.exit("main", 0, 2.0, 1.5e9, ExitMark::kNormal);
  EXPECT_EQ(c.text,
            "    0.500000 main() {\n"
            "    0.750000   leaf() 1.234 us\n"
            "    1.000000   thrower() 0.005 us [exception]\n"
            "    2.000000 } main() 1500000.000 us\n");
}

TEST(TraceLines, FlushWritesTheHeldEntry) {
  Capture c;
  ThreadPrinter p({true, false, true}, 5, c.sink());
  p.enter("main", 0, 0);
  p.enter("hang", 1, 0);
  p.flush();
  EXPECT_EQ(c.text, "[5] main() {\n[5]   hang() {\n");
  p.exit("hang", 1, 0, 1000, ExitMark::kUnfinished);
  EXPECT_EQ(c.text, "[5] main() {\n[5]   hang() {\n[5]   } hang() 1.000 us [unfinished]\n");
}
