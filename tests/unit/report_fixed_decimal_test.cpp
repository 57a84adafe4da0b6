// append_fixed (report/fixed_decimal.hpp) writes exactly what fmt's "{:.Nf}" writes: checked
// on ties, values just either side of a tie, unit boundaries, a million pseudo-random
// durations of every size the replay shows and a million time points as the JSON exports
// write them (nanoseconds or microseconds since boot: up to 2^53, where the product by
// 10^decimals is no longer exact in a double).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include <cmath>
#include <cstdint>
#include <string>

#include "report/fixed_decimal.hpp"

namespace callmon::report {
namespace {

std::string fixed(double v, int decimals) {
  std::string s;
  append_fixed(s, v, decimals);
  return s;
}

void expect_as_fmt(double v) {
  for (int d = 0; d <= 3; ++d) ASSERT_EQ(fixed(v, d), fmt::format("{:.{}f}", v, d)) << v;
}

TEST(AppendFixed, PlainValues) {
  EXPECT_EQ(fixed(35.24, 1), "35.2");
  EXPECT_EQ(fixed(0, 1), "0.0");
  EXPECT_EQ(fixed(0.04, 1), "0.0");
  EXPECT_EQ(fixed(1.234, 3), "1.234");
  EXPECT_EQ(fixed(999.96, 1), "1000.0");
  EXPECT_EQ(fixed(12.0, 0), "12");
  EXPECT_EQ(fixed(0.0005, 3), fmt::format("{:.3f}", 0.0005));
}

TEST(AppendFixed, TiesAndNearTiesAsFmt) {
  for (double v : {0.25, 0.125, 0.35, 2.5, 3.5, 0.0625, 1.0005, 2.675, 1e-9, 0.05, 0.15})
    expect_as_fmt(v);
  for (double base : {0.05, 0.15, 1.25, 35.25, 999.95, 1.0005, 12.3455}) {
    expect_as_fmt(std::nextafter(base, 0.0));
    expect_as_fmt(std::nextafter(base, 1e300));
  }
}

TEST(AppendFixed, LargeAndOddValuesGoToFmt) {
  for (double v : {1e9, 1.5e12, 3600e9, 1e300, -1.5, -0.0}) expect_as_fmt(v);
  EXPECT_EQ(fixed(NAN, 1), fmt::format("{:.1f}", NAN));
}

TEST(AppendFixed, LargeTimePointsAsFmt) {
  for (double v : {1e12 + 0.0005, 123456789012.3455, 4503599627370495.5, 9007199254740991.0,
                   9007199254740992.0, 2.5e15 + 0.125, 1099511627776.0625})
    expect_as_fmt(v);
  for (double base : {1e12 + 0.0005, 86400e9 + 0.0015, 3.6e12 + 0.5}) {
    expect_as_fmt(std::nextafter(base, 0.0));
    expect_as_fmt(std::nextafter(base, 1e300));
  }
}

TEST(AppendFixed, RandomTimePointsAsFmt) {
  uint64_t x = 2463534242ull;
  for (int i = 0; i < 1000000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // A tick count of a machine up for days times a clock factor, in ns and in us.
    const double ns = static_cast<double>(x >> (10 + (x & 31))) * 0.3571428571;
    for (double v : {ns, ns / 1e3}) {
      const int d = static_cast<int>((x >> 8) & 3);
      ASSERT_EQ(fixed(v, d), fmt::format("{:.{}f}", v, d)) << v;
      ASSERT_EQ(fixed(v, 3), fmt::format("{:.3f}", v)) << v;
    }
  }
}

TEST(AppendFixed, RandomDurationsAsFmt) {
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 1000000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Tick counts up to ~2^40 times a clock factor, as ticks_to_ns gives them, scaled down
    // to each of the replay's units.
    double ns = static_cast<double>(x >> (24 + (x & 15))) * 0.3571428571;
    for (double scale : {1.0, 1e3, 1e6, 1e9}) {
      const double v = ns / scale;
      const int d = static_cast<int>((x >> 8) & 3);
      ASSERT_EQ(fixed(v, d), fmt::format("{:.{}f}", v, d)) << v;
    }
  }
}

}  // namespace
}  // namespace callmon::report

namespace callmon::report {
namespace {

// write_fixed (the in-place form, three decimals at once from a table) at the edges of
// its digits: every value of the decimals' table, carries into the integer part, the
// longest quick text (just under 2^53), and what it leaves past its end untouched.
TEST(WriteFixed, DecimalTableAndCarriesAsFmt) {
  auto written = [](double v, int d) {
    char room[kFixedRoom];
    return std::string(room, write_fixed(room, v, d));
  };
  for (int i = 0; i < 1000; ++i) {
    const double v = 7 + i / 1000.0;
    ASSERT_EQ(written(v, 3), fmt::format("{:.3f}", v)) << v;
  }
  for (double v : {0.0, 0.0004, 0.9995, 0.99951, 9.9999, 99.9996, 999.9999, 1e15 + 0.999,
                   9007199254740991.0, 9007199254740992.0, 1e300, -0.0, -2.5})
    for (int d = 0; d <= 3; ++d) EXPECT_EQ(written(v, d), fmt::format("{:.{}f}", v, d)) << v;
  EXPECT_EQ(written(9007199254740991.0, 3).size(), 20u);
}

// write_fixed_before writes the same text, ending where it is told, and nothing after it.
TEST(WriteFixed, BeforeAnEndAsForward) {
  for (double v : {0.0, 0.04, 0.05, 0.25, 1.0005, 35.24, 999.95, 999.9999, 123456789012.3455,
                   9007199254740991.0, 9007199254740992.0, 1e300, -0.0, -2.5, double{NAN}, double{INFINITY}}) {
    for (int d = 0; d <= 3; ++d) {
      char room[2 * kFixedRoom];
      std::memset(room, '#', sizeof room);
      char* end = room + kFixedRoom;
      char* start = write_fixed_before(end, v, d);
      EXPECT_EQ(std::string(start, end), fmt::format("{:.{}f}", v, d)) << v;
      EXPECT_EQ(*end, '#');
      EXPECT_EQ(start[-1], '#');
    }
  }
}

// The text's length comes from the digit count of the scaled value (its bit width): every
// power of ten and its neighbours, where the count changes, at each number of decimals.
TEST(AppendFixed, DigitCountAtPowersOfTen) {
  double p = 1;
  for (int e = 0; e <= 15; ++e, p *= 10) {
    for (double v : {p, p - 1, p + 1, p / 1000, p / 1000 - 0.001, p / 100 - 0.01, p - 0.001})
      if (v >= 0) expect_as_fmt(v);
    char text[kFixedRoom];
    for (int d = 0; d <= 3; ++d) {
      char* end = write_fixed(text, p, d);
      EXPECT_EQ(std::string(text, end), fmt::format("{:.{}f}", p, d)) << p;
    }
  }
}

// Exact ties (v * 10^decimals exactly halfway between two integers) are rounded in place,
// to the even neighbour: every one of ~50 000 ties of random magnitudes (2^-10 to 2^52, the
// time points of real recordings among them) as fmt writes it.
TEST(AppendFixed, EveryExactTieAsFmt) {
  uint64_t state = 88172645463325252u;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int ties = 0;
  for (int i = 0; i < 2000000 && ties < 50000; ++i) {
    const int e = static_cast<int>(next() % 62) - 10;
    const double v = std::ldexp(static_cast<double>(next() >> 11), e - 52);
    const int d = static_cast<int>(next() % 4);
    // A tie: the fraction of v * 10^d, exact in a long double's 64-bit mantissa for these.
    const long double scaled = static_cast<long double>(v) * std::pow(10.0L, d);
    if (scaled - std::floor(scaled) != 0.5L) continue;
    ++ties;
    ASSERT_EQ(fixed(v, d), fmt::format("{:.{}f}", v, d)) << v << " " << d;
  }
  EXPECT_GT(ties, 1000);
}

}  // namespace
}  // namespace callmon::report
