// Fixed-point decimal text of a double (fixed_decimal.hpp).
#include "report/fixed_decimal.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace callmon::report {
namespace {

constexpr uint64_t kPow10[] = {1, 10, 100, 1000};
constexpr double kTwoTo53 = 9007199254740992.0;

// v * 10^decimals rounded to the nearest integer, computed exactly from v = m * 2^e (m < 2^53,
// so m * 1000 < 2^63 fits). False when it is an exact tie: fmt decides which way those go.
bool scaled_units(double v, uint64_t pow, uint64_t& units) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const int biased = static_cast<int>(bits >> 52);  // sign is 0: v >= 0
  uint64_t m = bits & ((uint64_t{1} << 52) - 1);
  int e;
  if (biased == 0) {
    e = -1074;  // subnormal
  } else {
    m |= uint64_t{1} << 52;
    e = biased - 1075;
  }
  const uint64_t product = m * pow;
  if (e >= 0) {  // v is an integer below 2^53: no fraction to round
    units = (m << e) * pow;
    return true;
  }
  const int shift = -e;
  if (shift >= 64) {  // below 2^-11 times the product's 2^63 bound: less than half a unit
    units = 0;
    return true;
  }
  const uint64_t rest = product & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  units = (product >> shift) + (rest > half);
  return rest != half;
}

// The text of 0 <= v < 2^53 into `out` (at least 24 bytes: 16 digits, the point and 3
// decimals); returns its end.
char* write_fixed(char* out, double v, int decimals) {
  const uint64_t pow = kPow10[decimals];
  uint64_t units = 0;
  if (!scaled_units(v, pow, units)) return fmt::format_to(out, "{:.{}f}", v, decimals);
  char digits[24];
  char* end = digits + sizeof digits;
  char* p = end;
  uint64_t whole = units / pow, part = units % pow;
  for (int i = 0; i < decimals; ++i) {
    *--p = static_cast<char>('0' + part % 10);
    part /= 10;
  }
  if (decimals > 0) *--p = '.';
  do {
    *--p = static_cast<char>('0' + whole % 10);
    whole /= 10;
  } while (whole != 0);
  const size_t n = static_cast<size_t>(end - p);
  std::memcpy(out, p, n);
  return out + n;
}

}  // namespace

void append_fixed(std::string& out, double v, int decimals) {
  char text[32];
  // The negation also sends NaN to fmt; the sign bit sends -0.0 ("-0.0").
  if (!(v >= 0 && v < kTwoTo53) || std::signbit(v)) {
    fmt::format_to(std::back_inserter(out), "{:.{}f}", v, decimals);
    return;
  }
  out.append(text, write_fixed(text, v, decimals));
}

}  // namespace callmon::report
