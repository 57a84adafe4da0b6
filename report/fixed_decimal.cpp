// Fixed-point decimal text of a double (fixed_decimal.hpp).
#include "report/fixed_decimal.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace callmon::report {
namespace {

constexpr uint64_t kPow10[] = {1, 10, 100, 1000};
// Below this the product v * 10^decimals is within 10^-7 of the exact one (its ulp is
// 1.2e-7 at 10^9), far inside the band around a tie that goes to fmt.
constexpr double kQuickLimit = 1e9;
constexpr double kTieBand = 1e-6;

}  // namespace

void append_fixed(std::string& out, double v, int decimals) {
  const uint64_t pow = kPow10[decimals];
  const double scaled = v * static_cast<double>(pow);
  // The negation also sends NaN to fmt; the sign bit sends -0.0 ("-0.0").
  if (!(v >= 0 && scaled < kQuickLimit) || std::signbit(v)) {
    fmt::format_to(std::back_inserter(out), "{:.{}f}", v, decimals);
    return;
  }
  auto units = static_cast<uint64_t>(scaled);  // truncation: floor for scaled >= 0
  const double frac = scaled - static_cast<double>(units);
  if (frac > 0.5 - kTieBand && frac < 0.5 + kTieBand) {
    // The product's rounding could decide which way it goes: let fmt round the exact value.
    fmt::format_to(std::back_inserter(out), "{:.{}f}", v, decimals);
    return;
  }
  units += frac > 0.5;
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
  out.append(p, end);
}

}  // namespace callmon::report
