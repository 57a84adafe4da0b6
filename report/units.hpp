// Human-readable durations for the reports: 3 significant digits with a unit (report,
// info) and the fixed 12-character field of `callmon replay`.
#pragma once

#include <cstdint>
#include <string>

namespace callmon::report {

// "0 ns", "35.2 ns", "1.23 us", "12.3 ms", "123 ms", "1.50 s": 3 significant digits;
// "<1 ns" for a positive value under a nanosecond (below what the clocks resolve).
std::string human_duration(double ns);

// A duration known only to lie in [lo, hi] (analysis/figure_range.hpp): both ends in the
// unit of the upper one, "0..4.10 us", "812..2840 ns", "1.20..3.45 ms"; "<1 ns" when the
// upper end is under a nanosecond.
std::string human_range(double lo, double hi);

// human_duration(ns) when the range [lo, hi] around it is narrow, else human_range(lo, hi).
std::string human_figure(double ns, double lo, double hi);

// The replay duration field, right-aligned in 12 characters: "     35.2 ns",
// "    1.234 us", "   12.345 ms", "       1.2 s". ns with 1 decimal, us and ms with 3,
// s with 1; "<1 ns" for a positive value that would show as "0.0" to "0.9 ns".
std::string replay_duration(double ns);
// replay_duration(ns) when the range [lo, hi] around it is narrow, else the range in the
// same 12 columns (figure_range.hpp).
std::string replay_figure(double ns, double lo, double hi);
// The same two, appended to `out` (the replay's hot path: no string of their own).
void append_replay_duration(std::string& out, double ns);
void append_replay_figure(std::string& out, double ns, double lo, double hi);
// The same written at `out`, which has room for kReplayFigureRoom bytes (the field is 12
// columns, more only for durations of years or NaN); returns the end of the text.
constexpr size_t kReplayFigureRoom = 720;
char* write_replay_duration(char* out, double ns);
char* write_replay_figure(char* out, double ns, double lo, double hi);

// Nanoseconds rounded to the nearest integer, as the JSON outputs give them.
int64_t ns_int(double ns);

// "1 call", "3 calls": a count with the singular or the plural noun.
std::string count_of(uint64_t n, const char* one, const char* many);

// 12 spaces: the duration field of a line that opens a call.
inline const std::string& replay_blank() {
  static const std::string blank(12, ' ');
  return blank;
}

}  // namespace callmon::report
