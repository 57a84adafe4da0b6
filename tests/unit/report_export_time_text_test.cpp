// Fixed3Text (report/export_time_text.hpp), the chrome and speedscope exports' times, writes
// exactly what write_fixed3 (fmt's "{:.3f}") writes: on each of its ranges and their edges
// (under 10^6, 10^9 thousandths, above), on values that change or keep the cached prefix,
// on ties, on the values it hands to write_fixed3 (negative, NaN, -0.0, 2^53 and more), and
// on a million pseudo-random time points of the exports' sizes in a row (ns and µs since
// boot), as one writer sees them. Its bytes past the text's end are the caller's: checked
// to stay within its room.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "report/export_json.hpp"
#include "report/export_time_text.hpp"

namespace callmon::report {
namespace {

std::string reference(double v) {
  char text[kFixed3Room];
  return std::string(text, write_fixed3(text, v));
}

std::string quick(Fixed3Text& writer, double v) {
  char text[Fixed3Text::kRoom + 16];
  std::memset(text, '#', sizeof text);
  char* end = writer.write(text, v);
  // Nothing is written past the room.
  for (size_t i = Fixed3Text::kRoom; i < sizeof text; ++i) EXPECT_EQ(text[i], '#');
  return std::string(text, end);
}

TEST(Fixed3Text, PlainValuesAndRangeEdges) {
  Fixed3Text w;
  EXPECT_EQ(quick(w, 0), "0.000");
  EXPECT_EQ(quick(w, 1.5), "1.500");
  EXPECT_EQ(quick(w, 12.3456), "12.346");
  EXPECT_EQ(quick(w, 999.9994), "999.999");
  EXPECT_EQ(quick(w, 999.9996), "1000.000");
  EXPECT_EQ(quick(w, 1234567.891), "1234567.891");
  EXPECT_EQ(quick(w, 1000000.0), "1000000.000");
  EXPECT_EQ(quick(w, 1234567890123.456), "1234567890123.456");
  for (double edge : {1e3, 1e6, 1e9, 1e12, 1e15}) {
    for (double v : {edge, std::nextafter(edge, 0.0), std::nextafter(edge, 1e300), edge - 0.0005,
                     edge + 0.0005, edge / 1000, edge / 1000 - 0.0005})
      EXPECT_EQ(quick(w, v), reference(v)) << v;
  }
}

TEST(Fixed3Text, TiesAsFmt) {
  Fixed3Text w;
  for (double v : {0.0005, 0.0015, 0.0025, 1.0625, 2.5e-3, 1099511627776.0625,
                   123456789012.3455, 2.5e12 + 0.125})
    EXPECT_EQ(quick(w, v), reference(v)) << v;
}

TEST(Fixed3Text, OddValuesGoToTheGeneralWriter) {
  Fixed3Text w;
  for (double v : {-1.5, -0.0, -0.0004, 9007199254740992.0, 1e300, 1.5e17})
    EXPECT_EQ(quick(w, v), reference(v)) << v;
  EXPECT_EQ(quick(w, NAN), reference(NAN));
  EXPECT_EQ(quick(w, -0.0), "0.000");  // write_fixed3 never shows "-0.000"
}

// quick_units takes exactly the values write() writes itself (the others go to
// write_fixed3), and write_units of its thousandths is write_fixed3's text: how the
// speedscope export converts a block of times first and writes them after.
TEST(Fixed3Text, QuickUnitsThenWriteUnitsAsFmt) {
  Fixed3Text w;
  uint64_t units = 7;
  for (double v : {-1.5, -0.0, -0.0004, 9007199254740992.0, 1e300, 1.5e17}) {
    EXPECT_FALSE(Fixed3Text::quick_units(v, units)) << v;
  }
  EXPECT_FALSE(Fixed3Text::quick_units(NAN, units));
  // The groups of the part below the prefix at their edges (each from its own quotient).
  for (double v : {0.0, 0.0005, 999.9995, 123456789.999, 123456789.9995, 1000000000.0,
                   1000000000.001, 1999999999.999, 15037593213679.213, 36000000999999.9996,
                   36000001000000.0004, 9007199254740.991, 4503599627370495.5}) {
    ASSERT_TRUE(Fixed3Text::quick_units(v, units)) << v;
    char text[Fixed3Text::kRoom];
    EXPECT_EQ(std::string(text, w.write_units(text, units)), reference(v)) << v;
  }
}

TEST(Fixed3Text, ThePrefixFollowsTheValues) {
  // The part above 10^9 thousandths is kept from the value before: going up, down, back
  // and across a change of its digit count must not reuse a stale prefix.
  Fixed3Text w;
  for (double v : {5e9, 5e9 + 1.25, 5e9 + 999.999, 5e9 + 1000, 4e9, 5e9, 99999.999, 100000.0,
                   99999.999, 1e6 + 0.001, 999999.999, 1e6, 12.5, 1e6})
    EXPECT_EQ(quick(w, v), reference(v)) << v;
}

TEST(Fixed3Text, RandomTimePointsInARowAsFmt) {
  Fixed3Text ns_writer, us_writer, dur_writer;
  uint64_t x = 88172645463325252ull;
  double clock = 3.6e12;  // an hour after boot, in ns
  for (int i = 0; i < 1000000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Steps of a few ns to a few ms, now and then a jump back (chrome's ts of an outer call).
    const double step = static_cast<double>(x >> (40 + (x & 15))) * 0.3571428571;
    clock += step;
    const double at = (x & 255) == 0 ? clock / 2 : clock;
    ASSERT_EQ(quick(ns_writer, at), reference(at)) << at;
    ASSERT_EQ(quick(us_writer, at / 1000.0), reference(at / 1000.0)) << at;
    ASSERT_EQ(quick(dur_writer, step / 1000.0), reference(step / 1000.0)) << step;
  }
}

}  // namespace
}  // namespace callmon::report
