// Renderers of a profile comparison (`callmon diff`): an aligned text table and JSON.
#pragma once

#include <string>

#include "analysis/profile_diff.hpp"

namespace callmon::report {

// Text: a header line with the two recordings and their call totals, then one row per
// function: calls old -> new, self and total change with percentages; "(new)" / "(gone)"
// marks a function present on one side only. Where either side of a figure is uncertain the
// cell holds the range of the change and both sides' figures ("+58.0..80.0 ns (0..42.0 ns
// -> 100 ns)"), or "within uncertainty: OLD -> NEW" when their ranges overlap; a closing
// note says so when some row is within uncertainty.
std::string render_diff_text(const analysis::ProfileDiff& diff);

// JSON: {"old": DIR, "new": DIR, "old_calls", "new_calls", "functions": [{"name", "module",
// "status": "both"|"new"|"gone", "old_calls", "new_calls", "old_self_ns", "new_self_ns",
// "old_total_ns", "new_total_ns", "delta_self_ns", "delta_total_ns"}]} (ns rounded); where
// a side's figure is uncertain, its "old_self_ns_range" etc. ([low, high]); where either side
// is, "delta_self_ns_range" / "delta_total_ns_range" (the range holding the true change) and
// "self_within_uncertainty" / "total_within_uncertainty".
std::string render_diff_json(const analysis::ProfileDiff& diff);

}  // namespace callmon::report
