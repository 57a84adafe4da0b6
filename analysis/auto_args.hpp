// `callmon record --auto-args`: the argument and return-value specs of every function of an
// ELF file that has debug information, derived from its DWARF (its own or a separate debug
// file's, found as analysis::ElfImage finds it). The rules, by parameter and return type,
// are in auto_args.cpp; the types' ABI classes in dwarf_arg_types.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/arg_spec.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

struct AutoArgs {
  uint64_t lo = 0, hi = 0;  // ELF virtual addresses [lo, hi) of the function's entry range
  FunctionArgs what;
};

// What --auto-args records for every function with a concrete out-of-line instance in the
// DWARF of `elf_path`: a named DW_TAG_subprogram with code (low_pc/high_pc or ranges), its
// names, types and parameters taken through DW_AT_specification and DW_AT_abstract_origin
// (out-of-class member definitions, out-of-line copies of inline functions). One entry per
// function, for the address range holding its entry (the hot part of a hot/cold split);
// `what` may be empty (void f()). Sorted by lo, disjoint: ranges claimed by two functions
// with different specs are dropped.
// Functions are left out when their calling convention is not the standard one (DWARF's
// DW_CC_nocall, GCC's .isra/.constprop/.part clones, or optimised code whose parameter
// locations at the entry contradict the ABI's registers), or when a class return type is
// known only by its declaration (whether it comes back in memory decides where the
// arguments are).
// Empty, not an error, when the file has no DWARF. Errors: the file cannot be opened or is
// not ELF.
Result<std::vector<AutoArgs>> auto_args(const std::string& elf_path);

}  // namespace callmon::analysis
