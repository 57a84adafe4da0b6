// The note `report` adds under a profile recorded with an unordered clock whose short
// functions read low: with `--clock=auto|tsc|monotonic` a small function's work partly runs
// beside its probes, so compensation leaves it part of its time (the benchmark's 7 ns leaf
// at 0.54-0.63 of it; docs/runtime.md, "The clock's order").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/flat_profile.hpp"
#include "format/recording.hpp"

namespace callmon::analysis {

// A one-sentence note when `compensated`, some process of `rec` was recorded with a clock
// other than tsc-fenced and has a probe cost, and some function of `rows` (with at least
// 100 calls) averages less self time per call than that probe cost in all (the scale at
// which the overlap matters); names up to three of them, the shortest first. Otherwise none.
std::optional<std::string> short_function_note(const format::Recording& rec,
                                               const std::vector<FunctionRow>& rows,
                                               bool compensated);

}  // namespace callmon::analysis
