// TEMPORARY (replaced by the h-dwarf branch): argument specs from DWARF for --auto-args.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/arg_spec.hpp"
#include "format/result.hpp"

namespace callmon::analysis {
struct AutoArgs {
  uint64_t lo, hi;
  FunctionArgs what;
};
Result<std::vector<AutoArgs>> auto_args(const std::string& elf_path);
}  // namespace callmon::analysis
