// The calls file a live coverage run leaves (tools/coverage/coverage_monitor.cpp writes one
// per process at its exit; docs/coverage.md): the process's modules and how often each
// address was entered. Text, one record per line:
//   callmon-live-calls 1
//   module <start hex> <end hex> <bias hex> <path>
//   calls <address hex> <count>
#pragma once

#include <string>

#include "analysis/coverage.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

inline constexpr const char* kLiveCallsMagic = "callmon-live-calls 1";

// Reads one calls file. Errors name the file and, for a bad line, its number.
Result<ProcessCalls> read_live_calls(const std::string& path);

}  // namespace callmon::analysis
