// Text and CSV renderings of the flat profile (profile_render.hpp).
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "report/profile_render.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using analysis::FunctionRow;

// One aligned table: numeric columns right-aligned, the function name last.
void append_table(std::string& out, const std::vector<FunctionRow>& rows) {
  constexpr size_t kCols = 6;
  static const std::array<const char*, kCols> heads = {"Total", "Self", "Calls",
                                                       "Avg",   "Min",  "Max"};
  std::vector<std::array<std::string, kCols>> cells;
  std::array<size_t, kCols> width{};
  for (size_t c = 0; c < kCols; ++c) width[c] = std::string(heads[c]).size();
  for (const FunctionRow& r : rows) {
    std::array<std::string, kCols> line = {
        human_duration(r.total_ns), human_duration(r.self_ns), std::to_string(r.calls),
        human_duration(r.avg_ns()), human_duration(r.min_ns), human_duration(r.max_ns)};
    for (size_t c = 0; c < kCols; ++c) width[c] = std::max(width[c], line[c].size());
    cells.push_back(std::move(line));
  }
  for (size_t c = 0; c < kCols; ++c) out += fmt::format("{:>{}}  ", heads[c], width[c]);
  out += "Function\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t c = 0; c < kCols; ++c) out += fmt::format("{:>{}}  ", cells[i][c], width[c]);
    out += rows[i].name;
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
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", csv_quote(r.name), r.calls,
                       csv_ns(r.total_ns), csv_ns(r.self_ns), csv_ns(r.avg_ns()),
                       csv_ns(r.min_ns), csv_ns(r.max_ns), csv_quote(r.module),
                       csv_quote(r.file), r.line);
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
    append_table(out, ordered_rows(p.functions, o));
    return out;
  }
  for (const analysis::ProfileGroup& g : p.groups) {
    out += '\n';
    if (p.group_by == analysis::GroupBy::kThread) {
      out += fmt::format("# process {} thread {}\n", g.process_key, g.tid);
    } else {
      out += fmt::format("# process {} pid {}\n", g.process_key, g.pid);
    }
    append_table(out, ordered_rows(g.functions, o));
  }
  return out;
}

std::string render_profile_csv(const analysis::Profile& p, const ProfileRenderOptions& o) {
  std::string out;
  const char* head = "name,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,module,file,line\n";
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
