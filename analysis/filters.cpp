// Parsing of the filter options and the recording origin (filters.hpp).
#include "analysis/filters.hpp"

#include <cerrno>
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

// Parses a decimal number of ns; empty gives `fallback`. False on anything else.
bool parse_ns(const std::string& s, uint64_t fallback, uint64_t& out) {
  if (s.empty()) {
    out = fallback;
    return true;
  }
  if (s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  out = std::strtoull(s.c_str(), nullptr, 10);
  return errno == 0;
}

}  // namespace

Result<std::pair<uint64_t, uint64_t>> parse_time_range(const std::string& text) {
  Error bad{"bad time range '" + text + "' (expected START:END in ns, START <= END)"};
  size_t colon = text.find(':');
  if (colon == std::string::npos) return bad;
  uint64_t start;
  uint64_t end;
  if (!parse_ns(text.substr(0, colon), 0, start) ||
      !parse_ns(text.substr(colon + 1), UINT64_MAX, end) || start > end)
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
