// `callmon export`: writes a recording for other tools (report/export.hpp, docs/export.md):
// Chrome trace JSON, folded stacks, callgrind, speedscope or Perfetto's protobuf trace, into
// the file given by -o ("-" for stdout). A file left half-written by an error is removed.
// --estimate prints how big the output would be and writes nothing; a streamed export that
// will pass 1 GB says so on stderr before it starts.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "report/export.hpp"
#include "report/units.hpp"
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
  bool estimate = false;
  bool fold_recursion = false;
};

// Above this an export says how big it will be before writing it: 1 GiB, or the bytes in
// CALLMON_EXPORT_LARGE_BYTES (for the tests, which have no gigabyte recordings).
uint64_t large_output() {
  const char* env = std::getenv("CALLMON_EXPORT_LARGE_BYTES");
  if (env && *env) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end && *end == '\0' && v > 0) return v;
  }
  return uint64_t{1} << 30;
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

// The recording's thread files, in bytes.
uint64_t recording_bytes(const format::Recording& rec) {
  uint64_t total = 0;
  for (const auto& proc : rec.processes)
    for (const auto& tf : proc.threads) {
      std::error_code ec;
      uint64_t size = std::filesystem::file_size(tf.path, ec);
      if (!ec) total += size;
    }
  return total;
}

std::string estimate_text(const report::ExportEstimate& est) {
  return fmt::format("{}{}, {}, {} {} ({} bytes)", est.sampled ? "about " : "",
                     report::count_of(est.calls, "call", "calls"),
                     report::count_of(est.threads, "thread", "threads"),
                     est.exact ? "exactly" : "about", human_bytes(est.bytes), est.bytes);
}

int run_export(const ExportCmdOptions& o) {
  const std::string cmd = "export";
  if (o.format != "chrome" && o.format != "folded" && o.format != "callgrind" &&
      o.format != "speedscope" && o.format != "perfetto")
    return fail(cmd,
                "unknown format '" + o.format +
                    "' (chrome, perfetto, folded, callgrind, speedscope)",
                2);
  if (o.fold_recursion && o.format != "folded")
    return fail(cmd, "--fold-recursion applies to --format=folded only", 2);
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;
  report::ExportOptions eo;
  eo.compensate = !o.no_compensation;
  eo.filters = &*filters;
  eo.fold_recursion = o.fold_recursion;

  if (o.estimate) {
    auto est = report::estimate_export(*rec, o.format, eo);
    if (!est) return fail(cmd, est.error());
    std::printf("%s export: %s\n", o.format.c_str(), estimate_text(*est).c_str());
    return 0;
  }
  // Without -o: DIR's name and the format's usual ending, in the working directory (said on
  // stderr at the end).
  const std::string path = !o.output.empty()        ? o.output
                           : o.format == "callgrind" ? default_output_name(o.dir, "", "callgrind.out.")
                           : o.format == "folded"    ? default_output_name(o.dir, ".folded")
                           : o.format == "perfetto"  ? default_output_name(o.dir, ".pftrace")
                                                     : default_output_name(o.dir, "." + o.format + ".json");
  auto out = OutputFile::open(cmd, path, format::file_mode_from_recording(o.dir));
  if (!out) return 1;

  // A streamed format's size grows with the calls: when the recording is big enough for
  // the output to pass 1 GiB (at one call per byte of recording, more than any recording
  // holds), a quick walk counts them and a note says what is coming.
  const double per_call = report::export_bytes_per_call(o.format);
  const uint64_t large = large_output();
  if (per_call > 0 &&
      static_cast<double>(recording_bytes(*rec)) * per_call >= static_cast<double>(large)) {
    // A sample of each thread's records (not a pass over the whole recording: that cost as
    // much as the decoding of the export itself); with call filters it only bounds the
    // size, and the filtered count (a walk) runs when the bound is large.
    constexpr uint64_t kNoteSampleBytes = 4u << 20;
    auto est = report::estimate_export(*rec, o.format, eo, kNoteSampleBytes);
    if (est && est->bound && est->bytes >= large) est = report::estimate_export(*rec, o.format, eo);
    if (est && est->bytes >= large)
      std::fprintf(stderr,
                   "callmon %s: note: writing %s (--estimate tells the size without writing; "
                   "--time-range, --thread, --max-depth and --min-duration select less)\n",
                   cmd.c_str(), estimate_text(*est).c_str());
  }

  std::FILE* f = out->stream();
  auto written = o.format == "chrome"      ? report::export_chrome(*rec, eo, f)
                 : o.format == "folded"    ? report::export_folded(*rec, eo, f)
                 : o.format == "callgrind" ? report::export_callgrind(*rec, eo, f)
                 : o.format == "perfetto"  ? report::export_perfetto(*rec, eo, f)
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
                  "chrome (Trace Event JSON), perfetto (Perfetto's protobuf trace, ~4x "
                  "smaller), folded (stacks with self ns), callgrind or speedscope")
      ->required();
  sub->add_option("-o,--output", o->output,
                  "file to write ('-' for standard output; default in the working directory: "
                  "DIR's name with .chrome.json, .pftrace, .folded or .speedscope.json, or "
                  "callgrind.out.NAME)")
      ->type_name("FILE");
  add_filter_options(sub, o->filters);
  sub->add_flag("--estimate", o->estimate,
                "print how many calls and bytes the output would have (filters applied) and "
                "write nothing");
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
