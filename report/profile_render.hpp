// Renders a flat profile (analysis/profile_builder.hpp) as the output of `callmon report`:
// an aligned text table with human units, JSON (the documented object with `functions`
// and, in grouped views, `groups`), or CSV (RFC 4180 quoting).
#pragma once

#include <cstddef>
#include <string>

#include "analysis/profile_builder.hpp"

namespace callmon::report {

struct ProfileRenderOptions {
  analysis::SortKey sort = analysis::SortKey::kTotal;
  size_t limit = 0;  // rows per table, 0 = all
  bool colour = false;  // text: times coloured by size (report/colour.hpp)
};

// Text: "# DIR: N calls, P processes, T threads", then the table
// "Total Self Calls Avg Min Max Function"; in grouped views one table per group, each
// titled "# process KEY" or "# process KEY thread TID".
std::string render_profile_text(const analysis::Profile& profile,
                                const ProfileRenderOptions& options);

// JSON: {"recording", "total_calls", "processes", "threads", "functions": [...],
// "groups": [...] (grouped views only)}; ns values are rounded integers.
std::string render_profile_json(const analysis::Profile& profile,
                                const ProfileRenderOptions& options);

// CSV: name,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,module,file,line; grouped views
// put process,tid first and list every group's rows.
std::string render_profile_csv(const analysis::Profile& profile,
                               const ProfileRenderOptions& options);

// The rows of a table as the renderers show them: sorted, then cut to the limit.
std::vector<analysis::FunctionRow> ordered_rows(std::vector<analysis::FunctionRow> rows,
                                                const ProfileRenderOptions& options);

}  // namespace callmon::report
