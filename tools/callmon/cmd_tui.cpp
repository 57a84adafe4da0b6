// `callmon tui`: an interactive terminal view of a recording (docs/tui.md): the call tree
// with folding, the flat profile sortable by column, callers and callees, search, a thread
// picker. Everything that can fail (the directory, the thread files, the options) fails
// here with one line before the terminal is taken over; tui/ holds the view itself.
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "analysis/graph.hpp"
#include "analysis/profile_builder.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/filter_options.hpp"
#include "tools/callmon/recording_options.hpp"
#include "tui/app_model.hpp"
#include "tui/curses_ui.hpp"
#include "tui/thread_list.hpp"

namespace callmon::tools {
namespace {

struct TuiOptions {
  std::string dir = "callmon.data";
  bool no_compensation = false;
  FilterOptions filters;
};

// The flat profile and the calling-context tree of the threads `filters` keeps, computed
// as report and graph compute them. An error message when a thread file cannot be read.
std::optional<std::string> load(const format::Recording& rec, const analysis::FilterSet& filters,
                                bool compensate, tui::TuiData& out,
                                const analysis::ProgressFn& progress) {
  analysis::ProfileOptions po;
  po.filters = &filters;
  po.compensate = compensate;
  // Two walks of the recording: report on each half of the progress bar.
  if (progress) po.progress = [&](uint64_t done, uint64_t total) { progress(done, 2 * total); };
  auto profile = analysis::build_profile(rec, po);
  if (!profile) return profile.error();
  analysis::GraphOptions go;
  go.filters = &filters;
  go.compensate = compensate;
  go.tree = true;
  if (progress)
    go.progress = [&](uint64_t done, uint64_t total) { progress(total + done, 2 * total); };
  auto graph = analysis::build_graph(rec, go);
  if (!graph) return graph.error();
  out.profile = std::move(*profile);
  out.graph = std::move(*graph);
  return std::nullopt;
}

int run_tui(const TuiOptions& o) {
  const std::string cmd = "tui";
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;

  std::vector<tui::ThreadChoice> threads = tui::thread_choices(*rec);
  if (filters->tid != 0 &&
      std::none_of(threads.begin(), threads.end(),
                   [&](const tui::ThreadChoice& t) { return t.tid == filters->tid; }))
    return fail(cmd, o.dir + ": no thread " + std::to_string(filters->tid));

  tui::TuiData data;
  Progress progress(cmd);
  auto error = load(*rec, *filters, !o.no_compensation, data, progress.callback());
  progress.finish();
  if (error) return fail(cmd, *error);
  print_warnings(cmd, data.profile.warnings);
  // After the checks of the input, so that bad input says what is wrong with it wherever
  // the output goes.
  if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
    return fail(cmd, "tui needs a terminal (stdin and stdout); use report, graph or replay "
                     "for output to a file or a pipe");

  tui::App app(o.dir, std::move(threads));
  app.set_data(std::move(data), filters->tid);
  analysis::FilterSet base = *filters;
  return tui::run_terminal(app, [&](uint32_t tid, tui::TuiData& out) {
    analysis::FilterSet f = base;
    f.tid = tid;
    return load(*rec, f, !o.no_compensation, out, {});
  });
}

void setup_tui(CLI::App& app, int& status) {
  auto o = std::make_shared<TuiOptions>();
  CLI::App* sub = app.add_subcommand(
      "tui", "Interactive terminal view: call tree with folding, flat profile sortable by "
             "column, callers and callees, search, thread picker");
  add_recording_option(sub, o->dir);
  sub->add_flag("--no-compensation", o->no_compensation,
                "show measured times as they are, without subtracting the recording's own "
                "cost per call");
  add_filter_options(sub, o->filters);
  sub->callback([o, &status] { status = run_tui(*o); });
}

const CommandRegistration registration_tui("tui", setup_tui);

}  // namespace
}  // namespace callmon::tools
