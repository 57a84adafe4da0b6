// `callmon coverage [-d DIR] [--merge DIR...] [-- PROG [ARGS...]]`: every function of the
// instrumented modules with its call count, the never-called ones marked, totals per module
// and source file (docs/coverage.md). From recordings, or live: with a program, it runs it
// under the coverage monitor (tools/coverage) which counts calls without recording a trace.
// `--fail-under PERCENT` makes it a CI gate.
#include <fmt/format.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "analysis/coverage.hpp"
#include "analysis/live_calls.hpp"
#include "report/coverage_render.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/pager.hpp"
#include "tools/callmon/program_args.hpp"
#include "tools/callmon/monitor_launch.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/output_file.hpp"
#include "tools/callmon/privileged_program.hpp"
#include "tools/callmon/program_launch.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct CoverageOptions {
  std::string dir = "callmon.data";
  std::vector<std::string> merge;
  std::string format = "text";
  std::string demangle = "short";
  std::string output = "-";
  TerminalOptions term;
  double fail_under = -1;
  bool uncalled = false;
  std::vector<std::string> command;  // live: the program to run
};

namespace fs = std::filesystem;

// A temporary directory, removed with what it holds when this goes out of scope.
struct TempDir {
  std::string path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// Runs the program under the coverage monitor and reads the calls file each of its
// processes left. Sets `status` to the program's exit status.
Result<std::vector<analysis::ProcessCalls>> run_live(const std::vector<std::string>& command,
                                                     int& status,
                                                     std::vector<std::string>& warnings) {
  auto program = resolve_program(command[0]);
  if (!program) return Error{program.error()};
  if (auto refused = preload_refusal(*program, command[0])) return Error{*refused};
  auto runtime = find_runtime();
  if (!runtime) return Error{runtime.error()};
  auto monitor = find_callmon_library("callmon-coverage.so", "CALLMON_COVERAGE_LIB");
  if (!monitor) return Error{monitor.error()};
  std::string tmpl = (fs::temp_directory_path() / "callmon-coverage.XXXXXX").string();
  TempDir dir;
  if (mkdtemp(tmpl.data()) == nullptr) return Error{"cannot create a temporary directory"};
  dir.path = tmpl;
  auto env = monitor_env(*runtime, *monitor, {{"dir", dir.path}});
  if (!env) return Error{env.error()};
  auto ended = run_program(*program, command, *env);
  if (!ended) return Error{ended.error()};
  status = ended->status;
  if (ended->signal)
    warnings.push_back(fmt::format("{} was killed by signal {}: the calls of that process are "
                                   "not counted",
                                   command[0], ended->signal));
  std::vector<analysis::ProcessCalls> calls;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir.path))
    if (e.path().filename().string().rfind("calls.", 0) == 0 && e.path().extension() != ".tmp")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    auto pc = analysis::read_live_calls(f);
    if (!pc) return Error{pc.error()};
    calls.push_back(std::move(*pc));
  }
  if (calls.empty() && !ended->signal)
    warnings.push_back(command[0] + " left no counts: no instrumented call reached the "
                                    "monitor, or it ended by _exit or exec");
  return calls;
}

int run_coverage(const CoverageOptions& o) {
  const std::string cmd = "coverage";
  apply_demangle_option(o.format == "json" ? "full" : o.demangle);
  const bool live = !o.command.empty();
  std::vector<format::Recording> recs;
  std::vector<std::string> dirs;
  if (!live) dirs.push_back(o.dir);
  dirs.insert(dirs.end(), o.merge.begin(), o.merge.end());
  for (const std::string& dir : dirs) {
    auto rec = open_recording_or_fail(cmd, dir);
    if (!rec) return 1;
    recs.push_back(std::move(*rec));
  }
  auto out = OutputFile::open(cmd, o.output);
  if (!out) return 1;
  std::vector<std::string> warnings;
  Progress progress(cmd);
  auto calls = analysis::recorded_calls(recs, progress.callback(), warnings);
  progress.finish();
  if (!calls) return fail(cmd, calls.error());
  int program_status = 0;
  if (live) {
    auto counted = run_live(o.command, program_status, warnings);
    if (!counted) return fail(cmd, counted.error(), 127);
    for (auto& pc : *counted) calls->push_back(std::move(pc));
  }
  auto cov = analysis::coverage_from_calls(*calls, recs.size() + (live ? 1 : 0),
                                           std::move(warnings));
  print_warnings(cmd, cov.warnings);
  if (cov.modules.empty())
    warn(cmd, "no instrumented module was found in the recording (were the programs built "
              "with -finstrument-functions or -pg?)");

  report::CoverageRenderOptions ro;
  ro.uncalled_only = o.uncalled;
  std::string text = o.format == "json"   ? report::render_coverage_json(cov, ro)
                     : o.format == "html" ? report::render_coverage_html(cov, ro)
                                          : report::render_coverage_text(cov, ro);
  if (o.output == "-") start_pager(o.term);
  out->write(text);
  if (int status = out->finish()) return status;
  if (program_status != 0)
    warn(cmd, fmt::format("{} exited with status {}", o.command[0], program_status));

  double percent = report::coverage_percent(cov);
  if (o.fail_under >= 0 && percent < o.fail_under)
    return fail(cmd, fmt::format("coverage {:.1f}% is under the required {:.1f}%", percent,
                                 o.fail_under),
                3);
  return program_status;
}

void setup_coverage(CLI::App& app, int& status) {
  auto o = std::make_shared<CoverageOptions>();
  CLI::App* sub = app.add_subcommand(
      "coverage", "Which functions of the instrumented modules ran, and how often; the "
                  "never-called ones marked");
  add_recording_option(sub, o->dir);
  sub->add_option("--merge", o->merge,
                  "more recording directories to add up with -d's (a whole test suite)")
      ->type_name("DIR...");
  add_demangle_option(sub, o->demangle);
  sub->add_option("--format", o->format, "text (default), json or html")
      ->check(CLI::IsMember({"text", "json", "html"}));
  sub->add_option("-o,--output", o->output, "file to write ('-', the default: standard output)")
      ->type_name("FILE");
  sub->add_option("--fail-under", o->fail_under,
                  "exit with status 3 when fewer than PERCENT of the functions were called")
      ->type_name("PERCENT")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_flag("--uncalled", o->uncalled, "list only the functions never called");
  add_terminal_options(sub, o->term, false);
  add_program_option(sub, o->command,
                     "live: run PROG [ARGS...] (after --) and count its calls without "
                     "recording; -d is then not read, --merge still adds recordings",
                     false);
  sub->footer("Examples: callmon coverage -d tests.data --merge more.data --fail-under 80\n"
              "          callmon coverage --uncalled -- ./prog args   (live)\n"
              "Live, callmon exits with the program's status unless --fail-under fails (3).");
  sub->callback([o, &status] { status = run_coverage(*o); });
}

const CommandRegistration registration_coverage("coverage", setup_coverage);

}  // namespace
}  // namespace callmon::tools
