// --demangle=full|short|no (uftrace's word) for the commands that print function names in
// text: how names are shown (report/shown_names.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace callmon::tools {

// Adds --demangle to `sub`, storing the word in `value` (default "short").
void add_demangle_option(CLI::App* sub, std::string& value);

// Makes `value` (checked by add_demangle_option) the style of this run. Call before any
// symbolization: "no" makes the symbolizer keep mangled names.
void apply_demangle_option(const std::string& value);

}  // namespace callmon::tools
