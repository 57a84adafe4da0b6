// Renderers of a profile comparison (`callmon diff`): an aligned text table and JSON.
#pragma once

#include <string>

#include "analysis/profile_diff.hpp"

namespace callmon::report {

// Text: a header line with the two recordings and their call totals, then one row per
// function: calls old -> new, self and total change with percentages; "(new)" / "(gone)"
// marks a function present on one side only.
std::string render_diff_text(const analysis::ProfileDiff& diff);

// JSON: {"old": DIR, "new": DIR, "old_calls", "new_calls", "functions": [{"name", "module",
// "status": "both"|"new"|"gone", "old_calls", "new_calls", "old_self_ns", "new_self_ns",
// "old_total_ns", "new_total_ns", "delta_self_ns", "delta_total_ns"}]} (ns rounded).
std::string render_diff_json(const analysis::ProfileDiff& diff);

}  // namespace callmon::report
