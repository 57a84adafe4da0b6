// Colour for the text outputs on a terminal (docs/terminal.md): a duration is coloured by
// its size, as uftrace does, so the expensive calls stand out in a long replay or table:
//
//   >= 1 s   bold red      >= 1 ms   red      >= 1 us   yellow      < 1 us   uncoloured
//
// Only ANSI SGR sequences (what `less -R` passes through). Whether to colour at all is the
// command's choice (--color, tools/callmon/pager.hpp); these functions only paint.
#pragma once

#include <string>

namespace callmon::report {

// The SGR sequence that starts the colour of a duration of `ns`; empty below 1 us.
const char* duration_colour(double ns);

// `text` (already padded to its column: the escapes take no room) in the colour of `ns`
// when `on`, else `text` as is.
std::string paint_duration(const std::string& text, double ns, bool on);

// `text` in bold when `on` (header lines).
std::string paint_header(const std::string& text, bool on);

}  // namespace callmon::report
