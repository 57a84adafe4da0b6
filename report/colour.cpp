// Duration colours (colour.hpp).
#include "report/colour.hpp"

namespace callmon::report {

namespace {
constexpr const char* kSgrReset = "\033[0m";
}  // namespace

const char* duration_colour(double ns) {
  if (ns >= 1e9) return "\033[1;31m";
  if (ns >= 1e6) return "\033[31m";
  if (ns >= 1e3) return "\033[33m";
  return "";
}

std::string paint_duration(const std::string& text, double ns, bool on) {
  const char* start = on ? duration_colour(ns) : "";
  if (*start == '\0') return text;
  // The padding stays outside the colour, so an underlined or reversed scheme would not
  // paint blanks either.
  size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return text;
  return text.substr(0, first) + start + text.substr(first) + kSgrReset;
}

std::string paint_header(const std::string& text, bool on) {
  return on ? "\033[1m" + text + kSgrReset : text;
}

}  // namespace callmon::report
