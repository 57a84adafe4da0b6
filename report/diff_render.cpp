// Text and JSON forms of a profile comparison (diff_render.hpp).
#include "report/diff_render.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/cxx_names.hpp"
#include "report/shown_names.hpp"
#include "report/units.hpp"

namespace callmon::report {

namespace {

const char* status(const analysis::DiffRow& r) {
  return r.in_old && r.in_new ? "both" : r.in_new ? "new" : "gone";
}

// "+1.20 us (+15%)"; the percentage only when the old value is not zero.
std::string change(double before, double after) {
  double delta = after - before;
  std::string text = (delta < 0 ? "-" : "+") + human_duration(std::fabs(delta));
  if (before > 0) text += fmt::format(" ({:+.0f}%)", 100.0 * delta / before);
  return text;
}

int64_t rounded(double ns) { return static_cast<int64_t>(std::llround(ns)); }

}  // namespace

std::string render_diff_text(const analysis::ProfileDiff& d) {
  std::string out = fmt::format("# diff {} ({} calls) -> {} ({} calls)\n", d.old_dir,
                                d.old_calls, d.new_dir, d.new_calls);
  out += fmt::format("{:>21}  {:>22}  {:>22}  {}\n", "Calls", "Self change", "Total change",
                     "Function");
  std::vector<std::string> names;
  for (const analysis::DiffRow& r : d.rows) names.push_back(r.name);
  const std::vector<std::string> labels = shown_row_names(names);
  size_t i = 0;
  for (const analysis::DiffRow& r : d.rows) {
    const std::string& label = labels[i++];
    std::string calls = fmt::format("{} -> {}", r.old_calls, r.new_calls);
    std::string mark = r.in_old && r.in_new ? "" : r.in_new ? "  (new)" : "  (gone)";
    out += fmt::format("{:>21}  {:>22}  {:>22}  {}{}\n", calls,
                       change(r.old_self_ns, r.new_self_ns),
                       change(r.old_total_ns, r.new_total_ns), label, mark);
  }
  return out;
}

std::string render_diff_json(const analysis::ProfileDiff& d) {
  nlohmann::ordered_json j;
  j["old"] = d.old_dir;
  j["new"] = d.new_dir;
  j["old_calls"] = d.old_calls;
  j["new_calls"] = d.new_calls;
  auto& fns = j["functions"] = nlohmann::ordered_json::array();
  for (const analysis::DiffRow& r : d.rows) {
    fns.push_back({{"name", r.name},
                   {"short_name", analysis::short_name(r.name)},
                   {"module", r.module},
                   {"status", status(r)},
                   {"old_calls", r.old_calls},
                   {"new_calls", r.new_calls},
                   {"old_self_ns", rounded(r.old_self_ns)},
                   {"new_self_ns", rounded(r.new_self_ns)},
                   {"old_total_ns", rounded(r.old_total_ns)},
                   {"new_total_ns", rounded(r.new_total_ns)},
                   {"delta_self_ns", rounded(r.new_self_ns) - rounded(r.old_self_ns)},
                   {"delta_total_ns", rounded(r.new_total_ns) - rounded(r.old_total_ns)}});
  }
  return j.dump(2) + "\n";
}

}  // namespace callmon::report
