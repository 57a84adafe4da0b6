// Parsing of the filter options and the recording origin (filters.hpp).
#include "analysis/filters.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "analysis/cxx_names.hpp"
#include "format/thread_reader.hpp"

namespace callmon::analysis {

bool FilterSet::keeps_name(const std::string& name) const {
  if (!has_name_filter()) return true;
  // Matched without a template function's return type ("void std::sort<...>(...)" is
  // excluded by '^std::'); a mangled name (--demangle=no) is matched demangled.
  const std::string matched = without_return_type(demangle(name));
  if (include && !std::regex_search(matched, *include)) return false;
  if (exclude && std::regex_search(matched, *exclude)) return false;
  return true;
}

uint8_t FilterSet::match_bits(const std::string& name) const {
  uint8_t bits = keeps_name(name) ? kKeepName : 0;
  if (focus && std::regex_search(name, *focus)) bits |= kFocusName;
  if (callee_of && std::regex_search(name, *callee_of)) bits |= kCalleeOfName;
  if (hide && std::regex_search(name, *hide)) bits |= kHideName;
  if (caller_of && std::regex_search(name, *caller_of)) bits |= kCallerOfName;
  return bits;
}

Result<std::regex> compile_filter_regex(const std::string& text) {
  try {
    return std::regex(text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Error{"bad regex '" + text + "': " + e.what()};
  }
}

namespace {

// Parses a time: a decimal number with an optional unit (ns, us, ms, s; none: ns), such as
// "250", "10ms", "1.5s"; empty gives `fallback`. False on anything else.
bool parse_ns(const std::string& s, uint64_t fallback, uint64_t& out) {
  if (s.empty()) {
    out = fallback;
    return true;
  }
  size_t digits = s.find_first_not_of("0123456789.");
  std::string number = s.substr(0, digits);
  std::string unit = digits == std::string::npos ? "" : s.substr(digits);
  double scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  if (scale == 0 || number.empty() || number == "." ||
      number.find('.') != number.rfind('.'))
    return false;
  if (number.find('.') == std::string::npos && scale == 1) {
    errno = 0;
    out = std::strtoull(number.c_str(), nullptr, 10);  // whole ns, exactly
    return errno == 0;
  }
  double ns = std::strtod(number.c_str(), nullptr) * scale;
  if (!(ns < 1.8e19)) return false;
  out = static_cast<uint64_t>(std::llround(ns));
  return true;
}

}  // namespace

Result<uint64_t> parse_duration(const std::string& text) {
  uint64_t ns;
  if (text.empty() || !parse_ns(text, 0, ns))
    return Error{"bad duration '" + text + "' (expected ns, or a number with a unit: 250us, "
                 "1.5ms, 2s)"};
  return ns;
}

Result<std::pair<uint64_t, uint64_t>> parse_time_range(const std::string& text) {
  Error bad{"bad time range '" + text +
            "' (expected START..END or START:END, times in ns or with a unit: 250us, 10ms, "
            "1.5s; START <= END)"};
  // "START..END" (a decimal point is a single '.'), or the older "START:END".
  size_t sep = text.find("..");
  size_t sep_len = 2;
  if (sep == std::string::npos) {
    sep = text.find(':');
    sep_len = 1;
  }
  if (sep == std::string::npos) return bad;
  uint64_t start;
  uint64_t end;
  if (!parse_ns(text.substr(0, sep), 0, start) ||
      !parse_ns(text.substr(sep + sep_len), UINT64_MAX, end) || start > end)
    return bad;
  return std::make_pair(start, end);
}

Result<bool> set_origin(FilterSet& filters, const format::Recording& rec) {
  bool any = false;
  uint64_t origin = 0;
  for (const auto& proc : rec.processes) {
    for (const auto& tf : proc.threads) {
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return Error{opened.error()};
      format::Event ev;
      if (opened->next(ev) && (!any || ev.ticks < origin)) {
        origin = ev.ticks;
        any = true;
      }
    }
  }
  filters.origin_ticks = origin;
  return true;
}

}  // namespace callmon::analysis
