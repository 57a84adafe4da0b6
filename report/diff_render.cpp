// Text and JSON forms of a profile comparison (diff_render.hpp).
#include "report/diff_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <nlohmann/json.hpp>

#include "analysis/cxx_names.hpp"
#include "report/shown_names.hpp"
#include "report/units.hpp"

namespace callmon::report {

namespace {

const char* status(const analysis::DiffRow& r) {
  return r.in_old && r.in_new ? "both" : r.in_new ? "new" : "gone";
}

// "+1.20 us (+15%)"; the percentage only when the old value is not zero. A change that
// rounds to nothing has no sign: "0 ns", "<1 ns" (units.hpp), "(0%)", never "-0%".
std::string change(double before, double after) {
  double delta = after - before;
  std::string size = human_duration(std::fabs(delta));
  std::string text = delta == 0 || std::fabs(delta) < 1 ? size : (delta < 0 ? "-" : "+") + size;
  if (before > 0) {
    double percent = std::round(100.0 * delta / before);
    text += percent == 0 ? std::string(" (0%)") : fmt::format(" ({:+.0f}%)", percent);
  }
  return text;
}

// A change known to lie in [lo, hi], both ends of one sign, each end signed: "+276..+300 ns",
// "-142..-38 ns" (human_range's digits and unit).
std::string signed_range(double lo, double hi) {
  const bool up = lo > 0;
  const std::string text = up ? human_range(lo, hi) : human_range(-hi, -lo);
  const size_t dots = text.find("..");
  const size_t space = text.rfind(' ');
  if (dots == std::string::npos || space == std::string::npos) return text;
  const std::string small = text.substr(0, dots);
  const std::string large = text.substr(dots + 2, space - dots - 2);
  const std::string unit = text.substr(space);
  return up ? "+" + small + "..+" + large + unit : "-" + large + "..-" + small + unit;
}

// The change of a figure: as `change` when both sides are certain; else the two sides'
// figures (ranges where uncertain) after the claimed change, or after "within uncertainty"
// when the ranges overlap (profile_diff.hpp).
std::string figure_change(const analysis::DiffFigure& f) {
  if (!f.uncertain()) return change(f.old_ns, f.new_ns);
  std::string sides = human_figure(f.old_ns, f.old_lo, f.old_hi) + " -> " +
                      human_figure(f.new_ns, f.new_lo, f.new_hi);
  if (f.within_uncertainty()) return "within uncertainty: " + sides;
  return signed_range(f.change_lo(), f.change_hi()) + " (" + sides + ")";
}

int64_t rounded(double ns) { return static_cast<int64_t>(std::llround(ns)); }

nlohmann::ordered_json range_json(double lo, double hi) {
  return nlohmann::ordered_json::array({rounded(lo), rounded(hi)});
}

// The JSON keys of one figure (`what`: "self" or "total"): the old and new figures, their
// ranges where uncertain, the change, and where either side is uncertain the range of the
// change and whether it lies within uncertainty.
void figure_json(nlohmann::ordered_json& j, const char* what, const analysis::DiffFigure& f) {
  const std::string w = what;
  j["old_" + w + "_ns"] = rounded(f.old_ns);
  j["new_" + w + "_ns"] = rounded(f.new_ns);
  if (f.old_uncertain()) j["old_" + w + "_ns_range"] = range_json(f.old_lo, f.old_hi);
  if (f.new_uncertain()) j["new_" + w + "_ns_range"] = range_json(f.new_lo, f.new_hi);
}

void change_json(nlohmann::ordered_json& j, const char* what, const analysis::DiffFigure& f) {
  const std::string w = what;
  j["delta_" + w + "_ns"] = rounded(f.new_ns) - rounded(f.old_ns);
  if (f.uncertain()) {
    j["delta_" + w + "_ns_range"] = range_json(f.change_lo(), f.change_hi());
    j[w + "_within_uncertainty"] = f.within_uncertainty();
  }
}

}  // namespace

std::string render_diff_text(const analysis::ProfileDiff& d) {
  std::string out = fmt::format("# diff {} ({} calls) -> {} ({} calls)\n", d.old_dir,
                                d.old_calls, d.new_dir, d.new_calls);
  struct Line {
    std::string calls, self, total;
  };
  std::vector<Line> lines;
  size_t w_calls = 21, w_self = 22, w_total = 22;  // the table's width without ranges
  size_t within = 0;
  for (const analysis::DiffRow& r : d.rows) {
    Line l{fmt::format("{} -> {}", r.old_calls, r.new_calls), figure_change(r.self),
           figure_change(r.total)};
    w_calls = std::max(w_calls, l.calls.size());
    w_self = std::max(w_self, l.self.size());
    w_total = std::max(w_total, l.total.size());
    within += r.self.within_uncertainty() || r.total.within_uncertainty();
    lines.push_back(std::move(l));
  }
  out += fmt::format("{:>{}}  {:>{}}  {:>{}}  {}\n", "Calls", w_calls, "Self change", w_self,
                     "Total change", w_total, "Function");
  std::vector<std::string> names;
  for (const analysis::DiffRow& r : d.rows) names.push_back(r.name);
  const std::vector<std::string> labels = shown_row_names(names);
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const analysis::DiffRow& r = d.rows[i];
    std::string mark = r.in_old && r.in_new ? "" : r.in_new ? "  (new)" : "  (gone)";
    out += fmt::format("{:>{}}  {:>{}}  {:>{}}  {}{}\n", lines[i].calls, w_calls, lines[i].self,
                       w_self, lines[i].total, w_total, labels[i], mark);
  }
  if (within)
    out += fmt::format(
        "# note: {} {} a change within uncertainty: where a figure is uncertain its range is "
        "shown, and a change that lies where the old and new ranges overlap is not claimed\n",
        within, within == 1 ? "function shows" : "functions show");
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
    nlohmann::ordered_json f{{"name", r.name},
                             {"short_name", analysis::short_name(r.name)},
                             {"module", r.module},
                             {"status", status(r)},
                             {"old_calls", r.old_calls},
                             {"new_calls", r.new_calls}};
    figure_json(f, "self", r.self);
    figure_json(f, "total", r.total);
    change_json(f, "self", r.self);
    change_json(f, "total", r.total);
    fns.push_back(std::move(f));
  }
  return j.dump(2) + "\n";
}

}  // namespace callmon::report
