// Text and CSV renderings of the flat profile (profile_render.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "report/profile_render.hpp"
#include "report/colour.hpp"
#include "report/shown_names.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using analysis::FunctionRow;

// One aligned table: numeric columns right-aligned, the function name last. Total and Self
// show their range where it is wide (human_figure); when some row's thread was off the CPU
// in it, the blocked (Off-CPU) and preempted times follow.
void append_table(std::string& out, const std::vector<FunctionRow>& rows, bool colour) {
  bool scheduler = std::any_of(rows.begin(), rows.end(), [](const FunctionRow& r) {
    return r.offcpu_ns > 0 || r.preempted_ns > 0;
  });
  std::vector<const char*> heads = {"Total", "Self", "Calls", "Avg", "Min", "Max"};
  if (scheduler) {
    heads.push_back("Off-CPU");
    heads.push_back("Preempted");
  }
  const size_t cols = heads.size();
  std::vector<std::vector<std::string>> cells;
  std::vector<std::vector<double>> ns;  // per cell: the time to colour by (-1: a count)
  std::vector<size_t> width(cols);
  for (size_t c = 0; c < cols; ++c) width[c] = std::string(heads[c]).size();
  for (const FunctionRow& r : rows) {
    std::vector<std::string> line = {
        human_figure(r.total_ns, r.total_lo_ns, r.total_hi_ns),
        human_figure(r.self_ns, r.self_lo_ns, r.self_hi_ns), std::to_string(r.calls),
        human_duration(r.avg_ns()), human_figure(r.min_ns, r.min_lo_ns, r.min_hi_ns),
        human_figure(r.max_ns, r.max_lo_ns, r.max_hi_ns)};
    if (scheduler) {
      line.push_back(human_duration(r.offcpu_ns));
      line.push_back(human_duration(r.preempted_ns));
    }
    for (size_t c = 0; c < cols; ++c) width[c] = std::max(width[c], line[c].size());
    cells.push_back(std::move(line));
    ns.push_back({r.total_ns, r.self_ns, -1, r.avg_ns(), r.min_ns, r.max_ns, r.offcpu_ns,
                  r.preempted_ns});
  }
  for (size_t c = 0; c < cols; ++c) out += fmt::format("{:>{}}  ", heads[c], width[c]);
  out += "Function\n";
  // Rows are functions; the shown name is only their label, told apart where two collide.
  std::vector<std::string> names;
  for (const FunctionRow& r : rows) names.push_back(r.name);
  std::vector<std::string> labels = shown_row_names(names);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t c = 0; c < cols; ++c)
      out += paint_duration(fmt::format("{:>{}}", cells[i][c], width[c]), ns[i][c],
                            colour && ns[i][c] >= 0) +
             "  ";
    out += labels[i];
    out += '\n';
  }
}

std::string csv_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

std::string csv_ns(double ns) { return std::to_string(std::llround(ns)); }

void append_csv_rows(std::string& out, const std::vector<FunctionRow>& rows,
                     const std::string& prefix) {
  for (const FunctionRow& r : rows) {
    out += prefix;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_quote(r.name),
                       r.calls, csv_ns(r.total_ns), csv_ns(r.self_ns), csv_ns(r.avg_ns()),
                       csv_ns(r.min_ns), csv_ns(r.max_ns), csv_quote(r.module),
                       csv_quote(r.file), r.line, csv_ns(r.offcpu_ns), csv_ns(r.preempted_ns),
                       csv_ns(r.total_lo_ns), csv_ns(r.total_hi_ns), csv_ns(r.self_lo_ns),
                       csv_ns(r.self_hi_ns));
  }
}

}  // namespace

std::vector<FunctionRow> ordered_rows(std::vector<FunctionRow> rows,
                                      const ProfileRenderOptions& options) {
  analysis::sort_functions(rows, options.sort);
  if (options.limit > 0 && rows.size() > options.limit) rows.resize(options.limit);
  return rows;
}

std::string render_profile_text(const analysis::Profile& p, const ProfileRenderOptions& o) {
  std::string out = fmt::format("# {}: {}, {}, {}\n", p.recording,
                                count_of(p.total_calls, "call", "calls"),
                                count_of(p.processes, "process", "processes"),
                                count_of(p.threads, "thread", "threads"));
  if (p.group_by == analysis::GroupBy::kNone) {
    append_table(out, ordered_rows(p.functions, o), o.colour);
    return out;
  }
  for (const analysis::ProfileGroup& g : p.groups) {
    out += '\n';
    if (p.group_by == analysis::GroupBy::kThread) {
      out += fmt::format("# process {} thread {}\n", g.process_key, g.tid);
    } else {
      out += fmt::format("# process {} pid {}\n", g.process_key, g.pid);
    }
    append_table(out, ordered_rows(g.functions, o), o.colour);
  }
  return out;
}

std::string render_profile_csv(const analysis::Profile& p, const ProfileRenderOptions& o) {
  std::string out;
  const char* head =
      "name,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,module,file,line,offcpu_ns,"
      "preempted_ns,total_lo_ns,total_hi_ns,self_lo_ns,self_hi_ns\n";
  if (p.group_by == analysis::GroupBy::kNone) {
    out += head;
    append_csv_rows(out, ordered_rows(p.functions, o), "");
    return out;
  }
  out += std::string("process,tid,") + head;
  for (const analysis::ProfileGroup& g : p.groups) {
    std::string tid = p.group_by == analysis::GroupBy::kThread ? std::to_string(g.tid) : "";
    append_csv_rows(out, ordered_rows(g.functions, o),
                    csv_quote(g.process_key) + "," + tid + ",");
  }
  return out;
}

}  // namespace callmon::report
