// Instrumented modules a recording says it did not record: those the program loaded with
// dlmopen into another link namespace (`dlmopen-module` lines, docs/format.md), where
// the probes bind to that namespace's libc instead of the runtime. `callmon info` lists the
// sentence among the recording's problems; `callmon record` prints it when the program ends.
#pragma once

#include <string>
#include <vector>

#include "format/recording.hpp"

namespace callmon::analysis {

// The distinct paths of every process's `dlmopen-module` lines, in file order.
std::vector<std::string> dlmopen_modules(const format::Recording& rec);

// "N module(s) loaded with dlmopen into another namespace are not recorded: PATHS", or ""
// for none.
std::string dlmopen_sentence(const std::vector<std::string>& paths);

}  // namespace callmon::analysis
