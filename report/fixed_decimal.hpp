// Fixed-point decimal text of a double without fmt's general machinery: the replay writes
// one or two durations per call, and at 10^7 calls a second fmt::format("{:.1f}") per line
// was most of its time. The text is byte for byte what fmt::format("{:.{}f}", v, decimals)
// writes: values whose rounding is in doubt (within 10^-6 of a tie) or too large for the
// quick way go to fmt itself.
#pragma once

#include <string>

namespace callmon::report {

// Appends `v` with `decimals` (0 to 3) digits after the point, as
// fmt::format("{:.{}f}", v, decimals) writes it.
void append_fixed(std::string& out, double v, int decimals);

}  // namespace callmon::report
