// Selected address ranges of an ELF file for the record-time name filter (name_selection.hpp).
#include "analysis/name_selection.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "analysis/symbolizer.hpp"

namespace callmon::analysis {

namespace {

std::string hex_text(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string file_basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> selected_ranges(const ElfImage& image,
                                                           const FilterSet& filters) {
  // find_function's answer only changes where a symbol starts or a sized one ends, so it
  // is evaluated once at each such boundary and holds until the next.
  std::vector<uint64_t> bounds{0};
  for (const FuncSymbol& s : image.symbols()) {
    bounds.push_back(s.start);
    if (s.size > 0 && s.start + s.size > s.start) bounds.push_back(s.start + s.size);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());

  std::unordered_map<const FuncSymbol*, bool> decided;  // one regex match per function
  std::string base = file_basename(image.path());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < bounds.size(); ++i) {
    uint64_t lo = bounds[i];
    uint64_t hi = i + 1 < bounds.size() ? bounds[i + 1] : UINT64_MAX;
    bool keep;
    if (const FuncSymbol* fn = image.find_function(lo)) {
      auto it = decided.find(fn);
      if (it == decided.end()) it = decided.emplace(fn, filters.keeps_name(demangle(fn->name))).first;
      keep = it->second;
    } else {
      keep = filters.keeps_name(base + "+" + hex_text(lo));
    }
    if (!keep) continue;
    if (!out.empty() && out.back().second == lo) out.back().second = hi;
    else out.emplace_back(lo, hi);
  }
  return out;
}

bool outside_modules_selected(const FilterSet& filters) { return filters.keeps_name("0x0"); }

}  // namespace callmon::analysis
