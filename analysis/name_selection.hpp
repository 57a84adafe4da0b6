// Which addresses of one ELF file the name filters (--include/--exclude) select, as sorted
// address ranges: what `callmon record` tells the runtime for its record-time filter
// (include/callmon/select_protocol.hpp). Decided exactly as the analysis-time filter decides
// a recorded address: the function ElfImage::find_function names there, demangled, through
// FilterSet::keeps_name; an address no symbol covers is decided on the name the symbolizer
// gives it ("file+0x<vaddr>", taken at the start of each uncovered stretch).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/elf_image.hpp"
#include "analysis/filters.hpp"

namespace callmon::analysis {

// Sorted, disjoint, merged [lo, hi) ranges of ELF virtual addresses of `image` whose
// function `filters` keeps. The last range may end at UINT64_MAX (a zero-size last symbol
// covers everything after it, as in find_function). Addresses below the first symbol are
// decided on their unnamed form. Uses only the name filters of `filters`.
std::vector<std::pair<uint64_t, uint64_t>> selected_ranges(const ElfImage& image,
                                                           const FilterSet& filters);

// The decision for an address in no module (named "0x<addr>" by the symbolizer).
bool outside_modules_selected(const FilterSet& filters);

}  // namespace callmon::analysis
