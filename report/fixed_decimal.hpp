// Fixed-point decimal text of a double without fmt's general machinery: the replay writes
// one or two durations per call and the JSON exports one or two time points, and at 10^7
// calls a fmt::format("{:.3f}") per value was most of their time. The text is byte for byte
// what fmt::format("{:.{}f}", v, decimals) writes: the double is split into its exact
// integer mantissa and power of two, so the rounding is that of the exact value, as fmt's;
// exact ties go to the even neighbour as fmt's do; negative values, NaN and values of 2^53 or
// more go to fmt itself.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

namespace callmon::report {

// Appends `v` with `decimals` (0 to 3) digits after the point, as
// fmt::format("{:.{}f}", v, decimals) writes it.
void append_fixed(std::string& out, double v, int decimals);

// The same written at `out`, which has room for kFixedRoom bytes (fmt's text of the largest
// double with 3 decimals fits); returns the end of the text. For writers that build a
// line in a local buffer and append it once.
constexpr size_t kFixedRoom = 320;
char* write_fixed(char* out, double v, int decimals);
// The same text written so that it ends at `end`; returns its first character. The bytes
// it takes before `end` (at most kFixedRoom) must be room. For right-aligned fields.
char* write_fixed_before(char* end, double v, int decimals);

// v * pow (pow a power of ten up to 1000) rounded to the nearest integer as fmt's
// "{:.Nf}" rounds it: computed exactly from v = m * 2^e (m < 2^53, so m * 1000 < 2^63
// fits), exact ties to the even neighbour. Only for v in [0, 2^53) with the sign bit clear
// (the callers check that first; fmt writes the others). Always true (a false would send
// the caller to fmt). Inline: the JSON exports call it twice per call.
inline bool fixed_units(double v, uint64_t pow, uint64_t& units) {
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
  units = product >> shift;
  // An exact tie goes to the even neighbour, as fmt rounds it (checked against fmt on every
  // tie in the unit test). Ties are common, not rare: a time point of 10^13-10^14 ns has a
  // fraction in steps of 2^-6 to 2^-10, and 1 in 8 of them times 1000 is a tie; sent to fmt
  // they were most of a speedscope export's time on a real recording.
  units += rest > half || (rest == half && (units & 1) != 0);
  return true;
}

}  // namespace callmon::report
