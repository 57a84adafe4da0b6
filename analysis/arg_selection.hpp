// Which functions of one ELF file get their arguments or return value recorded, and where
// those values are: what `callmon record -A/-R/--auto-args` tells the runtime, per module,
// through the selection service (include/callmon/select_protocol.hpp).
#pragma once

#include <vector>

#include "analysis/arg_spec.hpp"
#include "analysis/auto_args.hpp"
#include "analysis/elf_image.hpp"
#include "callmon/select_protocol.hpp"

namespace callmon::analysis {

// One SpecEntry per function of `image` that `rules` (matched on demangled symbol names)
// or `dwarf` (--auto-args, by address) give something to record; the rules' items take
// precedence over DWARF's at the same position. A symbol's range is [start, start + size),
// or up to the next symbol when it has no size. Sorted by address, disjoint.
std::vector<select::SpecEntry> spec_entries(const ElfImage& image,
                                            const std::vector<ArgRule>& rules,
                                            const std::vector<AutoArgs>& dwarf);

}  // namespace callmon::analysis
