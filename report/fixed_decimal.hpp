// Fixed-point decimal text of a double without fmt's general machinery: the replay writes
// one or two durations per call and the JSON exports one or two time points, and at 10^7
// calls a fmt::format("{:.3f}") per value was most of their time. The text is byte for byte
// what fmt::format("{:.{}f}", v, decimals) writes: the double is split into its exact
// integer mantissa and power of two, so the rounding is that of the exact value, as fmt's;
// exact ties go to the even neighbour as fmt's do; negative values, NaN and values of 2^53 or
// more go to fmt itself.
#pragma once

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

}  // namespace callmon::report
