// `callmon coverage [-d DIR] [--merge DIR...]`: every function of the instrumented modules
// with its call count, the never-called ones marked, totals per module and source file
// (docs/coverage.md). `--fail-under PERCENT` makes it a CI gate.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "analysis/coverage.hpp"
#include "report/coverage_render.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/output_file.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct CoverageOptions {
  std::string dir = "callmon.data";
  std::vector<std::string> merge;
  std::string format = "text";
  std::string output = "-";
  double fail_under = -1;
  bool uncalled = false;
};

int run_coverage(const CoverageOptions& o) {
  const std::string cmd = "coverage";
  std::vector<format::Recording> recs;
  std::vector<std::string> dirs{o.dir};
  dirs.insert(dirs.end(), o.merge.begin(), o.merge.end());
  for (const std::string& dir : dirs) {
    auto rec = open_recording_or_fail(cmd, dir);
    if (!rec) return 1;
    recs.push_back(std::move(*rec));
  }
  auto out = OutputFile::open(cmd, o.output);
  if (!out) return 1;
  Progress progress(cmd);
  auto cov = analysis::compute_coverage(recs, progress.callback());
  progress.finish();
  if (!cov) return fail(cmd, cov.error());
  print_warnings(cmd, cov->warnings);
  if (cov->modules.empty())
    warn(cmd, "no instrumented module was found in the recording (were the programs built "
              "with -finstrument-functions or -pg?)");

  report::CoverageRenderOptions ro;
  ro.uncalled_only = o.uncalled;
  std::string text = o.format == "json"   ? report::render_coverage_json(*cov, ro)
                     : o.format == "html" ? report::render_coverage_html(*cov, ro)
                                          : report::render_coverage_text(*cov, ro);
  out->write(text);
  if (int status = out->finish()) return status;

  double percent = report::coverage_percent(*cov);
  if (o.fail_under >= 0 && percent < o.fail_under)
    return fail(cmd, fmt::format("coverage {:.1f}% is under the required {:.1f}%", percent,
                                 o.fail_under),
                3);
  return 0;
}

void setup(CLI::App& app, int& status) {
  auto o = std::make_shared<CoverageOptions>();
  CLI::App* sub = app.add_subcommand(
      "coverage", "Which functions of the instrumented modules ran, and how often; the "
                  "never-called ones marked");
  add_recording_option(sub, o->dir);
  sub->add_option("--merge", o->merge,
                  "more recording directories to add up with -d's (a whole test suite)")
      ->type_name("DIR...");
  sub->add_option("--format", o->format, "text (default), json or html")
      ->check(CLI::IsMember({"text", "json", "html"}));
  sub->add_option("-o,--output", o->output, "file to write ('-', the default: standard output)")
      ->type_name("FILE");
  sub->add_option("--fail-under", o->fail_under,
                  "exit with status 3 when fewer than PERCENT of the functions were called")
      ->type_name("PERCENT")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_flag("--uncalled", o->uncalled, "list only the functions never called");
  sub->callback([o, &status] { status = run_coverage(*o); });
}

const CommandRegistration registration("coverage", setup);

}  // namespace
}  // namespace callmon::tools
