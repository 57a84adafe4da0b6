// Rendering a monitor outcome: the function table (hits, and times with --timing), the
// source listing with a count per line in the style of the 1987 execution monitor
// ("FILE LINE COUNT: source", optionally with scaled bars), and JSON for scripts.
#pragma once

#include <string>

#include "analysis/cxx_names.hpp"
#include "monitor/monitor.hpp"

namespace callmon::monitor {

struct RenderOptions {
  bool timing = false;
  bool all = false;        // list units that were never hit too
  bool histogram = false;  // listing: a bar scaled to the largest count
  analysis::NameStyle names = analysis::NameStyle::short_form;  // --demangle
};

// One table per image: units hit (all units with `all`), most hits first, then a summary.
std::string render_function_table(const MonitorOutcome& outcome, const RenderOptions& options);

// Every line of every source file that has statement units, with the count of its line
// (blank for lines without code). Files that cannot be read are listed by line number only.
std::string render_line_listing(const MonitorOutcome& outcome, const RenderOptions& options);

// {"status":..., "images":[{"pid", "exe", "end", "units":[{"name", "short_name", "module", "file", "line",
// "address", "hits", "total_ns", "self_ns", "threads":[{"tid","hits"}]}], ...}]}
std::string render_json(const MonitorOutcome& outcome);

}  // namespace callmon::monitor
