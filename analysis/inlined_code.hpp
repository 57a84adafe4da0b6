// Where DWARF says a function's body was inlined: each DW_TAG_inlined_subroutine names its
// function (the abstract origin) and sits in a concrete out-of-line function. Coverage uses
// this to tell a function that never ran from one whose own copy was never entered but whose
// body was inlined into code that ran (-pg and -mfentry put no probe in inlined bodies; a
// probe may also fire with another module's copy's address).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace callmon::analysis {

class ElfImage;

struct InlinedFunction {
  std::string file;  // declaration file, completed as ElfImage::source_of() completes it
  uint32_t line = 0;  // declaration line
  std::string name;  // DW_AT_name: "helper", "~Shape", "operator()"
  std::string linkage_name;  // mangled (DW_AT_linkage_name), empty when DWARF has none
  std::vector<uint64_t> containers;  // entry addresses of the functions holding its copies
};

// Every function that has inlined copies in `image`, keyed by its declaration; empty when
// the file has no usable DWARF.
std::vector<InlinedFunction> inlined_functions(ElfImage& image);

// True when demangled `full_name` ("shop::Shape::~Shape()") is the function DWARF calls
// `short_name` ("~Shape"): the short name stands right before the parameter list or the
// template arguments.
bool names_match(const std::string& full_name, const std::string& short_name);

}  // namespace callmon::analysis
