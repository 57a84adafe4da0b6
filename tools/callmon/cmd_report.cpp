// `callmon report`: the flat profile of a recording (calls, total, self, avg/min/max per
// function) as a text table, JSON or CSV, for the whole recording or per process/thread.
#include <cstdio>
#include <memory>

#include "analysis/clock_note.hpp"
#include "analysis/profile_builder.hpp"
#include "analysis/sched_note.hpp"
#include "report/profile_render.hpp"
#include "report/shown_names.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/filter_options.hpp"
#include "tools/callmon/pager.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct ReportOptions {
  std::string dir = "callmon.data";
  std::string sort = "total";
  std::string format = "text";
  bool per_thread = false;
  bool per_process = false;
  bool no_compensation = false;
  size_t limit = 0;
  std::string demangle = "short";
  FilterOptions filters;
  TerminalOptions term;
};

int run_report(const ReportOptions& o) {
  const std::string cmd = "report";
  analysis::SortKey key;
  if (!analysis::parse_sort_key(o.sort, key)) return fail(cmd, "unknown sort key " + o.sort, 2);
  // JSON and CSV keep the full names whatever --demangle says (JSON adds the short ones).
  apply_demangle_option(o.format == "text" ? o.demangle : "full");
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;

  analysis::ProfileOptions po;
  po.filters = &*filters;
  po.group_by = o.per_thread    ? analysis::GroupBy::kThread
                : o.per_process ? analysis::GroupBy::kProcess
                                : analysis::GroupBy::kNone;
  po.compensate = !o.no_compensation;
  Progress progress(cmd);
  po.progress = progress.callback();
  auto profile = analysis::build_profile(*rec, po);
  progress.finish();
  if (!profile) return fail(cmd, profile.error());
  print_warnings(cmd, profile->warnings);

  report::ProfileRenderOptions ro;
  ro.sort = key;
  ro.limit = o.limit;
  ro.colour = use_colour(o.term);
  std::string out = o.format == "json"  ? report::render_profile_json(*profile, ro)
                    : o.format == "csv" ? report::render_profile_csv(*profile, ro)
                                        : report::render_profile_text(*profile, ro);
  if (o.format == "text") {
    // The notes name functions as the table does, and fit the screen.
    std::vector<analysis::FunctionRow> shown = profile->functions;
    for (analysis::FunctionRow& r : shown) r.name = report::shown_name(r.name);
    const size_t width = report::note_width();
    if (auto note = analysis::short_function_note(*rec, shown, po.compensate))
      out += report::note_lines(*note, width);
    if (auto note = analysis::clock_bound_note(shown)) out += report::note_lines(*note, width);
    if (auto note = analysis::scheduler_note(*rec)) out += report::note_lines(*note, width);
  }
  start_pager(o.term);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_stdout(cmd);
}

void setup_report(CLI::App& app, int& status) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Flat profile: calls, total, self and avg/min/max time per function");
  add_recording_option(sub, o->dir);
  sub->add_option("--sort", o->sort, "sort key: total (default), self, calls, avg, min, max, name")
      ->check(CLI::IsMember({"total", "self", "calls", "avg", "min", "max", "name"}));
  sub->add_option("--format", o->format, "output format: text (default), json or csv")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  CLI::Option* pt =
      sub->add_flag("--per-thread", o->per_thread, "one table per thread of every process");
  sub->add_flag("--per-process", o->per_process, "one table per process image")->excludes(pt);
  sub->add_flag("--no-compensation", o->no_compensation,
                "report measured times as they are, without subtracting the recording's own "
                "cost per call (measured at start-up)");
  sub->add_option("--limit", o->limit, "show at most N functions per table (0: all)")
      ->type_name("N");
  add_filter_options(sub, o->filters);
  add_terminal_options(sub, o->term);
  add_demangle_option(sub, o->demangle);
  sub->callback([o, &status] { status = run_report(*o); });
}

const CommandRegistration registration_report("report", setup_report);

}  // namespace
}  // namespace callmon::tools
