// `callmon export`: writes a recording for other tools (report/export.hpp, docs/export.md):
// Chrome trace JSON, folded stacks, callgrind or speedscope, into the file given by -o
// ("-" for stdout). A file left half-written by an error is removed.
#include <cstdio>
#include <memory>

#include "report/export.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/filter_options.hpp"
#include "format/file_mode.hpp"
#include "tools/callmon/output_file.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct ExportCmdOptions {
  std::string dir = "callmon.data";
  std::string format;
  std::string output;
  FilterOptions filters;
  bool no_compensation = false;
  bool fold_recursion = false;
};

int run_export(const ExportCmdOptions& o) {
  const std::string cmd = "export";
  if (o.format != "chrome" && o.format != "folded" && o.format != "callgrind" &&
      o.format != "speedscope")
    return fail(cmd, "unknown format '" + o.format + "' (chrome, folded, callgrind, speedscope)",
                2);
  if (o.fold_recursion && o.format != "folded")
    return fail(cmd, "--fold-recursion applies to --format=folded only", 2);
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;

  // Without -o: DIR's name and the format's usual ending, in the working directory (said on
  // stderr at the end).
  const std::string path = !o.output.empty()        ? o.output
                           : o.format == "callgrind" ? default_output_name(o.dir, "", "callgrind.out.")
                           : o.format == "folded"    ? default_output_name(o.dir, ".folded")
                                                     : default_output_name(o.dir, "." + o.format + ".json");
  auto out = OutputFile::open(cmd, path, format::file_mode_from_recording(o.dir));
  if (!out) return 1;

  report::ExportOptions eo;
  eo.compensate = !o.no_compensation;
  eo.filters = &*filters;
  eo.fold_recursion = o.fold_recursion;
  std::FILE* f = out->stream();
  auto written = o.format == "chrome"      ? report::export_chrome(*rec, eo, f)
                 : o.format == "folded"    ? report::export_folded(*rec, eo, f)
                 : o.format == "callgrind" ? report::export_callgrind(*rec, eo, f)
                                           : report::export_speedscope(*rec, eo, f);
  if (!written) {
    out->discard();
    return fail(cmd, path + ": " + written.error());
  }
  if (int status = out->finish()) return status;
  if (o.output.empty()) std::fprintf(stderr, "callmon %s: wrote %s\n", cmd.c_str(), path.c_str());
  print_warnings(cmd, *written);
  return 0;
}

void setup_export(CLI::App& app, int& status) {
  auto o = std::make_shared<ExportCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "export", "Write the recording for other tools: Perfetto/chrome://tracing, flame "
                "graphs, KCachegrind/callgrind_annotate, speedscope");
  add_recording_option(sub, o->dir);
  sub->add_option("--format", o->format,
                  "chrome (Trace Event JSON), folded (stacks with self ns), callgrind or "
                  "speedscope")
      ->required();
  sub->add_option("-o,--output", o->output,
                  "file to write ('-' for standard output; default in the working directory: "
                  "DIR's name with .chrome.json, .folded or .speedscope.json, or "
                  "callgrind.out.NAME)")
      ->type_name("FILE");
  add_filter_options(sub, o->filters);
  sub->add_flag("--no-compensation", o->no_compensation,
                "use measured times as they are, without subtracting the recording's own "
                "cost per call");
  sub->add_flag("--fold-recursion", o->fold_recursion,
                "folded: merge a function already on the stack (recursion, direct or "
                "through others) into its first occurrence there");
  sub->callback([o, &status] { status = run_export(*o); });
}

const CommandRegistration registration_export("export", setup_export);

}  // namespace
}  // namespace callmon::tools
