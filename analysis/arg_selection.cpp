// Per-module argument specs (arg_selection.hpp).
#include "analysis/arg_selection.hpp"

#include <algorithm>
#include <map>

#include "analysis/symbolizer.hpp"

namespace callmon::analysis {

namespace {

bool is_clone(const std::string& name) {
  return name.find(".isra.") != std::string::npos || name.find(".constprop.") != std::string::npos ||
         name.find(".part.") != std::string::npos || name.find(".cold") != std::string::npos;
}

}  // namespace

std::vector<select::SpecEntry> spec_entries(const ElfImage& image,
                                            const std::vector<ArgRule>& rules,
                                            const std::vector<AutoArgs>& dwarf) {
  struct Span {
    uint64_t hi;
    FunctionArgs what;
  };
  std::map<uint64_t, Span> by_start;
  for (const AutoArgs& a : dwarf)
    if (!a.what.empty() && a.lo < a.hi) by_start[a.lo] = Span{a.hi, a.what};
  if (!rules.empty()) {
    const auto& syms = image.symbols();
    for (size_t i = 0; i < syms.size(); ++i) {
      // A compiler's clone of a function (.isra, .constprop) may take other parameters than
      // the name says: its values would be wrong, so it gets none.
      if (is_clone(syms[i].name)) continue;
      FunctionArgs what = args_for_name(rules, demangle(syms[i].name));
      if (what.empty()) continue;
      uint64_t lo = syms[i].start;
      uint64_t hi = syms[i].size ? lo + syms[i].size
                                 : (i + 1 < syms.size() ? syms[i + 1].start : lo + 1);
      auto it = by_start.find(lo);
      if (it == by_start.end()) {
        by_start[lo] = Span{hi, what};
      } else {
        it->second.what.merge(what);  // the user's items over DWARF's
      }
    }
  }
  std::vector<select::SpecEntry> out;
  for (const auto& [lo, span] : by_start) {
    uint64_t hi = span.hi;
    if (!out.empty() && out.back().hi > lo) continue;  // overlapping: the first one wins
    out.push_back(place_args(span.what, lo, hi));
  }
  return out;
}

}  // namespace callmon::analysis
