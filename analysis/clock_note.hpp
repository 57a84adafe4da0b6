// The note `report` and `html` add to a profile recorded with an unordered clock whose
// short functions read low: with `--clock=auto|tsc|monotonic` a small function's work partly
// runs beside its probes, so compensation leaves it part of its time (the benchmark's 7 ns
// leaf at 0.54-0.63 of it; docs/runtime.md, "The clock's order").
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "format/recording.hpp"

namespace callmon::analysis {

// Below what self time per call functions read low, and under which clock.
struct ShortFunctionLimit {
  double ns;          // one probe pair's cost in all (entry and exit)
  std::string clock;  // the clock's name, as in the meta file
};

// The largest probe cost in all among the processes of `rec` recorded with a clock other
// than tsc-fenced; none without such a process, or when not `compensated`.
std::optional<ShortFunctionLimit> short_function_limit(const format::Recording& rec,
                                                       bool compensated);

// The note's sentence for `names` (the short functions, shortest first; at least one).
std::string short_function_text(const ShortFunctionLimit& limit,
                                const std::vector<std::string>& names);

// The note when some row of `rows` (with at least 100 calls) averages less self time per
// call than short_function_limit; names up to three of them. Row: name, calls, self_ns
// (FunctionRow, GraphFunction).
template <class Rows>
std::optional<std::string> short_function_note(const format::Recording& rec, const Rows& rows,
                                               bool compensated) {
  std::optional<ShortFunctionLimit> limit = short_function_limit(rec, compensated);
  if (!limit) return std::nullopt;
  constexpr uint64_t kMinCalls = 100;  // fewer: too few calls for the average to mean much
  std::vector<std::pair<double, std::string>> found;
  for (const auto& r : rows)
    if (r.calls >= kMinCalls && r.self_ns / static_cast<double>(r.calls) < limit->ns)
      found.emplace_back(r.self_ns / static_cast<double>(r.calls), r.name);
  if (found.empty()) return std::nullopt;
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& f : found) names.push_back(std::move(f.second));
  return short_function_text(*limit, names);
}

}  // namespace callmon::analysis
