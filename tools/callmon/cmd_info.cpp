// `callmon info`: what a recording holds (command, exit, clock, processes, threads, how
// each thread ended, totals) and what went wrong while recording (cut threads, unmatched
// exits, lost events, damaged files).
#include <cstdio>
#include <memory>

#include "analysis/recording_info.hpp"
#include "report/info_render.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/pager.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct InfoOptions {
  std::string dir = "callmon.data";
  std::string format = "text";
  TerminalOptions term;
};

int run_info(const InfoOptions& o) {
  const std::string cmd = "info";
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  Progress progress(cmd);
  auto info = analysis::gather_info(*rec, progress.callback());
  progress.finish();
  if (!info) return fail(cmd, info.error());
  print_warnings(cmd, info->warnings);
  std::string out =
      o.format == "json" ? report::render_info_json(*info) : report::render_info_text(*info);
  start_pager(o.term);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_stdout(cmd);
}

void setup_info(CLI::App& app, int& status) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand(
      "info", "Summary of a recording: command, processes, threads, totals and problems");
  add_recording_option(sub, o->dir);
  sub->add_option("--format", o->format, "output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  add_terminal_options(sub, o->term, false);
  sub->callback([o, &status] { status = run_info(*o); });
}

const CommandRegistration registration_info("info", setup_info);

}  // namespace
}  // namespace callmon::tools
