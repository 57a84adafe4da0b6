// Duration formatting of the reports (report/units.hpp): 3 significant digits with unit
// changes at the right places, and the 12-character replay field.
#include <gtest/gtest.h>

#include "report/units.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <random>

namespace callmon::report {
namespace {

TEST(HumanDuration, ThreeSignificantDigits) {
  EXPECT_EQ(human_duration(0), "0 ns");
  EXPECT_EQ(human_duration(5), "5.00 ns");
  EXPECT_EQ(human_duration(35.24), "35.2 ns");
  EXPECT_EQ(human_duration(120), "120 ns");
  EXPECT_EQ(human_duration(1234), "1.23 us");
  EXPECT_EQ(human_duration(12345678), "12.3 ms");
  EXPECT_EQ(human_duration(1.5e9), "1.50 s");
  EXPECT_EQ(human_duration(999.7), "1.00 us");  // rounding moves to the next unit
  EXPECT_EQ(human_duration(3600e9), "3600 s");
}

TEST(ReplayDuration, TwelveCharactersRightAligned) {
  EXPECT_EQ(replay_duration(35.2), "     35.2 ns");
  EXPECT_EQ(replay_duration(1234), "    1.234 us");
  EXPECT_EQ(replay_duration(12345000), "   12.345 ms");
  EXPECT_EQ(replay_duration(1.2e9), "       1.2 s");
  EXPECT_EQ(replay_duration(0), "      0.0 ns");
  EXPECT_EQ(replay_blank().size(), 12u);
}

// Below the clocks' resolution no tenths are shown: "<1 ns", in every form.
TEST(HumanDuration, BelowANanosecond) {
  EXPECT_EQ(human_duration(0.24), "<1 ns");
  EXPECT_EQ(human_duration(0.999), "<1 ns");
  EXPECT_EQ(human_duration(1), "1.00 ns");
  EXPECT_EQ(human_range(0, 0.24), "<1 ns");
  EXPECT_EQ(human_range(0, 1.54), "0..1.54 ns");
  EXPECT_EQ(replay_duration(0.24), "       <1 ns");
  EXPECT_EQ(replay_duration(0.96), "      1.0 ns");
}

// The replay field as fmt writes it (the printer's text before it was written by hand).
std::string reference_duration(double ns) {
  if (ns < 0) ns = 0;
  std::string t;
  if (ns > 0 && ns < 0.95) t = "<1 ns";
  else if (ns < 999.95) t = fmt::format("{:.1f} ns", ns);
  else if (ns < 999999.5) t = fmt::format("{:.3f} us", ns / 1e3);
  else if (ns < 999999500.0) t = fmt::format("{:.3f} ms", ns / 1e6);
  else t = fmt::format("{:.1f} s", ns / 1e9);
  return fmt::format("{:>12}", t);
}

std::string written_duration(double ns) {
  char text[kReplayFigureRoom];
  return std::string(text, write_replay_duration(text, ns));
}

std::string written_figure(double ns, double lo, double hi) {
  char text[kReplayFigureRoom];
  return std::string(text, write_replay_figure(text, ns, lo, hi));
}

// write_replay_duration is fmt's text at the edges: zero, negative, the unit changes and
// their rounding boundaries, ties, the largest doubles, infinity and NaN.
TEST(ReplayDuration, WrittenAsFmtAtTheEdges) {
  const double edges[] = {0.0, -0.0, -1.0, -1e300, 0.94, 0.949999, 0.95, 0.96, 1.0, 0.05,
                          0.25, 999.94, 999.949999, 999.95, 999.96, 1000.0, 999999.4,
                          999999.4999, 999999.5, 999999.6, 1e6, 999999499.9, 999999500.0,
                          1e9, 1.25e9, 3600e9, 9007199254740992.0, 1e22, 1e300,
                          std::numeric_limits<double>::max(),
                          std::numeric_limits<double>::denorm_min(),
                          std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN()};
  for (double v : edges) {
    SCOPED_TRACE(fmt::format("{}", v));
    EXPECT_EQ(written_duration(v), reference_duration(v));
    EXPECT_EQ(replay_duration(v), reference_duration(v));
  }
  EXPECT_EQ(written_duration(0.05), "       <1 ns");
  EXPECT_EQ(written_duration(999999500.0), "       1.0 s");
  EXPECT_EQ(written_duration(1e22), "10000000000000.0 s");  // wider than the field: not cut
}

TEST(ReplayDuration, WrittenAsFmtOnRandomValues) {
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> exponent(-2, 12);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::pow(10.0, exponent(rng));
    ASSERT_EQ(written_duration(v), reference_duration(v)) << v;
  }
}

// A wide range is shown as the range, its unit glued on; a narrow one as the figure.
TEST(ReplayFigure, RangeOrFigure) {
  EXPECT_EQ(written_figure(100, 95, 105), "    100.0 ns");
  EXPECT_EQ(written_figure(1000, 80000, 2760000), "0.08..2.76ms");
  EXPECT_EQ(written_figure(50, 0, 812), "    0..812ns");
  EXPECT_EQ(written_figure(0.5, 0, 0.9), "        <1ns");
  EXPECT_EQ(written_figure(5e9, 1e9, 9e9), " 1.00..9.00s");
  EXPECT_EQ(written_figure(0, 0, 0), "      0.0 ns");
  EXPECT_EQ(written_figure(1, -5, 10), "   0..10.0ns");
  for (double hi : {1.0, 999.0, 1e3, 1e6, 1e9, 1e15}) {
    std::string text;
    append_replay_figure(text, hi / 2, hi / 10, hi);
    EXPECT_EQ(written_figure(hi / 2, hi / 10, hi), text);
    EXPECT_EQ(replay_figure(hi / 2, hi / 10, hi), text);
  }
}

}  // namespace
}  // namespace callmon::report
