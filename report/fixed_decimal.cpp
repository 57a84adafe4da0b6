// Fixed-point decimal text of a double (fixed_decimal.hpp).
#include "report/fixed_decimal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace callmon::report {
namespace {

constexpr uint64_t kPow10[] = {1, 10, 100, 1000};
constexpr double kTwoTo53 = 9007199254740992.0;

// Two digits at a time: the division per digit was most of the formatting's time.
constexpr char kTwoDigits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// "000" to "999", 4 bytes apart: the three decimals of a time in one load.
struct ThreeDigits {
  char text[1000][4];
  constexpr ThreeDigits() : text() {
    for (int i = 0; i < 1000; ++i) {
      text[i][0] = static_cast<char>('0' + i / 100);
      text[i][1] = static_cast<char>('0' + i / 10 % 10);
      text[i][2] = static_cast<char>('0' + i % 10);
      text[i][3] = 0;
    }
  }
};
constexpr ThreeDigits kThreeDigits;

// `units` as digits with the point before the last `Decimals`: written backwards ending at
// `end`; returns the first character.
template <int Decimals>
char* digits_backwards(char* end, uint64_t units) {
  char* p = end;
  if constexpr (Decimals == 3) {
    p -= 3;
    std::memcpy(p, kThreeDigits.text[units % 1000], 3);
    units /= 1000;
  } else {
    for (int i = 0; i < Decimals; ++i) {
      *--p = static_cast<char>('0' + units % 10);
      units /= 10;
    }
  }
  if (Decimals > 0) *--p = '.';
  while (units >= 100) {
    const auto two = static_cast<size_t>(units % 100) * 2;
    units /= 100;
    p -= 2;
    std::memcpy(p, kTwoDigits + two, 2);
  }
  if (units >= 10) {
    p -= 2;
    std::memcpy(p, kTwoDigits + units * 2, 2);
  } else {
    *--p = static_cast<char>('0' + units);
  }
  return p;
}

// How many digits `units` takes with the point before its last `Decimals` (at least one
// before the point): the text's length, known before it is written. The digits are counted
// from the number's bit width (one multiply and one compare, not a division per digit).
constexpr uint64_t kPow10All[20] = {1,
                                    10,
                                    100,
                                    1000,
                                    10000,
                                    100000,
                                    1000000,
                                    10000000,
                                    100000000,
                                    1000000000,
                                    10000000000,
                                    100000000000,
                                    1000000000000,
                                    10000000000000,
                                    100000000000000,
                                    1000000000000000,
                                    10000000000000000,
                                    100000000000000000,
                                    1000000000000000000,
                                    10000000000000000000u};
inline size_t decimal_digits(uint64_t v) {
  // floor(log10(2) * bit width) is the digits' count or one less.
  const unsigned guess = (static_cast<unsigned>(std::bit_width(v | 1)) * 1233) >> 12;
  return guess + (v >= kPow10All[guess]);
}
template <int Decimals>
size_t text_length(uint64_t units) {
  const size_t digits = std::max<size_t>(decimal_digits(units), Decimals + 1);
  return Decimals > 0 ? digits + 1 : digits;
}

// The digits are written in place, backwards from the end the length gives: a copy of
// freshly written bytes from a scratch buffer stalled on the stores just made (a wide load
// over narrow stores) and was most of the formatting's time.
template <int Decimals>
char* write_quick(char* out, double v) {
  uint64_t units = 0;
  if (!fixed_units(v, kPow10[Decimals], units))
    return fmt::format_to(out, "{:.{}f}", v, Decimals);
  char* end = out + text_length<Decimals>(units);
  digits_backwards<Decimals>(end, units);
  return end;
}

template <int Decimals>
char* write_quick_before(char* end, double v) {
  uint64_t units = 0;
  if (!fixed_units(v, kPow10[Decimals], units)) {
    char text[kFixedRoom];
    const size_t n = static_cast<size_t>(fmt::format_to(text, "{:.{}f}", v, Decimals) - text);
    std::memcpy(end - n, text, n);
    return end - n;
  }
  return digits_backwards<Decimals>(end, units);
}

// The negation also sends NaN to fmt; the sign bit sends -0.0 ("-0.0").
bool quick_range(double v) { return v >= 0 && v < kTwoTo53 && !std::signbit(v); }

}  // namespace

char* write_fixed(char* out, double v, int decimals) {
  if (!quick_range(v)) return fmt::format_to(out, "{:.{}f}", v, decimals);
  switch (decimals) {
    case 0: return write_quick<0>(out, v);
    case 1: return write_quick<1>(out, v);
    case 2: return write_quick<2>(out, v);
    default: return write_quick<3>(out, v);
  }
}

char* write_fixed_before(char* end, double v, int decimals) {
  if (!quick_range(v)) {
    char text[kFixedRoom];
    const size_t n = static_cast<size_t>(write_fixed(text, v, decimals) - text);
    std::memcpy(end - n, text, n);
    return end - n;
  }
  switch (decimals) {
    case 0: return write_quick_before<0>(end, v);
    case 1: return write_quick_before<1>(end, v);
    case 2: return write_quick_before<2>(end, v);
    default: return write_quick_before<3>(end, v);
  }
}

void append_fixed(std::string& out, double v, int decimals) {
  if (!quick_range(v)) {
    fmt::format_to(std::back_inserter(out), "{:.{}f}", v, decimals);
    return;
  }
  char text[32];
  out.append(text, write_fixed(text, v, decimals));
}

}  // namespace callmon::report
