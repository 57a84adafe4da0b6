// Duration formatting of the reports (report/units.hpp): 3 significant digits with unit
// changes at the right places, and the 12-character replay field.
#include <gtest/gtest.h>

#include "report/units.hpp"

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

}  // namespace
}  // namespace callmon::report
