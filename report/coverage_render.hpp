// Renders a function coverage (analysis/coverage.hpp) as text, JSON or a self-contained HTML
// page (docs/coverage.md). Totals per module and per source file come with every format.
#pragma once

#include <string>

#include "analysis/coverage.hpp"

namespace callmon::report {

struct CoverageRenderOptions {
  bool uncalled_only = false;  // list only the functions never called (totals stay whole)
};

// Called / total functions of the whole coverage, as a percentage (100 when there are none);
// functions only inlined into code that ran count neither way (analysis/coverage.hpp).
double coverage_percent(const analysis::Coverage& cov);

std::string render_coverage_text(const analysis::Coverage& cov, const CoverageRenderOptions& o);
std::string render_coverage_json(const analysis::Coverage& cov, const CoverageRenderOptions& o);
std::string render_coverage_html(const analysis::Coverage& cov, const CoverageRenderOptions& o);

}  // namespace callmon::report
