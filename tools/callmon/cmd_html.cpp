// `callmon html`: one self-contained HTML page of a recording (docs/html.md): summary, flat
// profile, a section per function with its callers and callees, a flame graph (all threads
// merged or one), each thread's calls in time order. Built from
// the call graph and calling-context tree of `callmon graph`, with the same filters and
// compensation. A file left half-written by an error is removed.
#include <cstdio>
#include <memory>

#include "analysis/clock_note.hpp"
#include "analysis/graph.hpp"
#include "analysis/sched_note.hpp"
#include "report/html_report.hpp"
#include "tools/callmon/command.hpp"
#include "format/file_mode.hpp"
#include "tools/callmon/output_file.hpp"
#include "tools/callmon/filter_options.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct HtmlCmdOptions {
  std::string dir = "callmon.data";
  std::string output;
  bool no_compensation = false;
  double prune_percent = 0.1;
  std::string compress = "auto";
  std::string demangle = "short";
  FilterOptions filters;
};

// The filters as the user gave them, for the page's summary.
std::string describe_filters(const FilterOptions& f) {
  std::string out;
  auto add = [&](const std::string& option, const std::string& value) {
    if (value.empty()) return;
    if (!out.empty()) out += ' ';
    out += option + ' ' + value;
  };
  add("--include", f.include);
  add("--exclude", f.exclude);
  add("--focus", f.focus);
  add("--callee-of", f.callee_of);
  add("--hide", f.hide);
  add("--caller-of", f.caller_of);
  if (f.min_duration_ns) add("--min-duration", std::to_string(f.min_duration_ns));
  add("--time-range", f.time_range);
  if (f.max_depth) add("--max-depth", std::to_string(f.max_depth));
  if (f.tid) add("--thread", std::to_string(f.tid));
  return out;
}

int run_html(const HtmlCmdOptions& o) {
  const std::string cmd = "html";
  apply_demangle_option(o.demangle);
  if (!(o.prune_percent >= 0 && o.prune_percent < 100))
    return fail(cmd, "--prune must be a percentage in [0, 100)", 2);
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;

  // Without -o: DIR's name with .html, in the working directory (said on stderr at the end).
  const std::string path = o.output.empty() ? default_output_name(o.dir, ".html") : o.output;
  auto out = OutputFile::open(cmd, path, format::file_mode_from_recording(o.dir));
  if (!out) return 1;

  analysis::GraphOptions go;
  go.compensate = !o.no_compensation;
  go.tree = true;
  go.threads = true;  // the thread picker and the time-ordered view
  go.filters = &*filters;
  Progress progress(cmd);
  go.progress = progress.callback();
  auto graph = analysis::build_graph(*rec, go);
  progress.finish();
  if (!graph) {
    out->discard();
    return fail(cmd, graph.error());
  }
  print_warnings(cmd, graph->warnings);
  // On the page only (the summary's warnings list): it is about reading the times.
  if (auto note = analysis::short_function_note(*rec, graph->functions, !o.no_compensation))
    graph->warnings.push_back("Note: " + *note);
  if (auto note = analysis::clock_bound_note(graph->functions))
    graph->warnings.push_back("Note: " + *note);
  if (auto note = analysis::scheduler_note(*rec)) graph->warnings.push_back("Note: " + *note);

  report::HtmlPageInfo info;
  info.session = rec->session;
  info.compensated = !o.no_compensation;
  info.filters = describe_filters(o.filters);
  report::HtmlOptions ho;
  ho.prune_fraction = o.prune_percent / 100;
  ho.packing = o.compress == "always"  ? report::HtmlPacking::kAlways
               : o.compress == "never" ? report::HtmlPacking::kNever
                                       : report::HtmlPacking::kAuto;
  std::string page = report::render_html(*graph, info, ho);
  out->write(page);
  if (int status = out->finish()) return status;
  if (o.output.empty()) std::fprintf(stderr, "callmon %s: wrote %s\n", cmd.c_str(), path.c_str());
  return 0;
}

void setup_html(CLI::App& app, int& status) {
  auto o = std::make_shared<HtmlCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "html", "One self-contained HTML page: summary, sortable flat profile, a section per "
              "function with callers and callees, flame graph (all threads or one), each "
              "thread's calls in time order");
  add_recording_option(sub, o->dir);
  sub->add_option("-o,--output", o->output,
                  "file to write ('-' for standard output; default: DIR's name with .html, "
                  "in the working directory)")
      ->type_name("FILE");
  sub->add_flag("--no-compensation", o->no_compensation,
                "use measured times as they are, without subtracting the recording's own "
                "cost per call");
  sub->add_option("--prune", o->prune_percent,
                  "flame graph: merge calling contexts under PCT % of all time into one "
                  "'other' box per caller (default 0.1)")
      ->type_name("PCT");
  sub->add_option("--compress", o->compress,
                  "gzip the page's data (read back by the browser): auto (default: when "
                  "over 1 MB), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  add_filter_options(sub, o->filters);
  add_demangle_option(sub, o->demangle);
  sub->callback([o, &status] { status = run_html(*o); });
}

const CommandRegistration registration_html("html", setup_html);

}  // namespace
}  // namespace callmon::tools
