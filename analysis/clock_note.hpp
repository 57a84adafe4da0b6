// Notes on what compensation cannot know. `report` and `html` add the first to a profile
// recorded with an unordered clock whose short functions' times are uncertain: with
// `--clock=auto|tsc|monotonic` a small function's work partly runs beside its probes (the
// benchmark's 7 ns leaf read 0.54-0.63 of it; docs/runtime.md, "The clock's order"). The
// second names functions that read a clock (docs/runtime.md, "Calls bound by the clock").
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/flat_profile.hpp"
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

// The note's sentence for `names` (the functions that read a clock, longest first; at
// least one): names up to three.
std::string clock_bound_text(const std::vector<std::string>& names);

// The note when some rows read a clock while they ran (clocked_calls): their time may be
// bound by the clock (a loop until a deadline), which the probes of their callees do not
// lengthen; names up to three, the longest first. Row: name, total_ns, clocked_calls
// (FunctionRow, GraphFunction).
template <class Rows>
std::optional<std::string> clock_bound_note(const Rows& rows) {
  std::vector<std::pair<double, std::string>> found;
  for (const auto& r : rows)
    if (r.clocked_calls) found.emplace_back(-r.total_ns, r.name);
  if (found.empty()) return std::nullopt;
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (auto& f : found) names.push_back(std::move(f.second));
  return clock_bound_text(names);
}

}  // namespace callmon::analysis
