// `callmon replay`: the indented call tree of every thread, process by process, with the
// duration of every call (format in report/replay_printer.hpp; end-to-end tests parse it).
#include <cstdio>
#include <cstring>
#include <memory>

#include "analysis/call_walk.hpp"
#include "analysis/symbolizer.hpp"
#include "analysis/thread_problems.hpp"
#include "analysis/recording_info.hpp"
#include "report/replay_printer.hpp"
#include "analysis/compensation.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/filter_options.hpp"
#include "tools/callmon/pager.hpp"
#include "tools/callmon/pipe_size.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct ReplayOptions {
  std::string dir = "callmon.data";
  uint32_t tid = 0;  // 0: every thread
  uint32_t max_depth = 0;
  bool no_compensation = false;
  std::string demangle = "short";
  FilterOptions filters;  // --thread and --max-depth stay replay's own (above)
  TerminalOptions term;
};

int run_replay(const ReplayOptions& o) {
  const std::string cmd = "replay";
  apply_demangle_option(o.demangle);
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;
  // Validate every selected file first, so a corrupt one fails before any output.
  for (const format::ProcessRecording& proc : rec->processes) {
    for (const format::ThreadFile& tf : proc.threads) {
      if (o.tid != 0 && tf.tid != o.tid) continue;
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return fail(cmd, opened.error());
    }
  }
  std::vector<std::string> paths;
  for (const auto& proc : rec->processes)
    for (const auto& tf : proc.threads)
      if (o.tid == 0 || tf.tid == o.tid) paths.push_back(tf.path);
  // The TID column is worth its width only when several threads are shown.
  const bool tid_column = paths.size() > 1;
  const bool colour = start_terminal(o.term);
  widen_pipe(1, size_t{1} << 20);  // room for 16 of the printer's 64 KiB blocks
  Progress progress(cmd);
  analysis::ProgressFn tick = progress.callback();
  const uint64_t total_bytes = tick ? analysis::total_file_size(paths) : 0;
  uint64_t done_bytes = 0;
  auto cache = analysis::make_elf_cache();
  std::vector<std::string> warnings;
  bool found = o.tid == 0;
  bool header_done = false;
  for (const format::ProcessRecording& proc : rec->processes) {
    bool any = o.tid == 0;
    for (const auto& t : proc.threads) any = any || t.tid == o.tid;
    if (!any) continue;
    found = true;
    analysis::ProcessSymbolizer sym(proc.meta, cache);
    report::ReplayPrinter printer(stdout, proc.meta, sym, o.max_depth);
    printer.set_colour(colour);
    if (!header_done) printer.raw_line(report::replay_column_header(tid_column));
    header_done = true;
    printer.set_normal_end(analysis::run_ended_normally(*rec));
    analysis::NameDecider names(*filters, sym);
    format::ModuleLifetimes lifetimes(proc.meta.modules);
    printer.raw_line(report::replay_process_header(proc.meta));
    for (const format::ThreadFile& tf : proc.threads) {
      if (o.tid != 0 && tf.tid != o.tid) continue;
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) {
        printer.flush();
        std::fflush(stdout);
        return fail(cmd, opened.error());
      }
      format::ThreadReader& reader = opened.value();
      printer.set_thread_column(tid_column ? tf.tid : 0);
      reader.use_module_lifetimes(lifetimes);
      const auto& name = reader.header().thread_name;
      printer.raw_line(report::replay_thread_header(tf.tid,
                                                    std::string(name, strnlen(name, sizeof name))));
      analysis::walk_filtered(reader, printer, &*filters, &names, proc, tf,
                              !o.no_compensation, [&](uint64_t bytes) {
        if (tick) {
          printer.flush_settled();  // keep stdout ahead of the progress line
          tick(done_bytes + bytes, total_bytes);
        }
      });
      done_bytes += reader.file_size();
      for (std::string& m : analysis::damage_messages(reader, 0)) warnings.push_back(m);
    }
    printer.flush();
    for (const std::string& w : sym.warnings()) warnings.push_back(w);
  }
  std::fflush(stdout);
  progress.finish();
  print_warnings(cmd, warnings);
  if (!found) return fail(cmd, o.dir + ": no thread " + std::to_string(o.tid));
  return 0;
}

void setup_replay(CLI::App& app, int& status) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* sub = app.add_subcommand(
      "replay", "Call tree of every thread with the duration of each call");
  add_recording_option(sub, o->dir);
  sub->add_option("--thread", o->tid, "show only the thread with this TID")->type_name("TID");
  sub->add_option("--max-depth", o->max_depth, "hide calls nested deeper than N levels (0: all)")
      ->type_name("N");
  sub->add_flag("--no-compensation", o->no_compensation,
                "show measured durations as they are, without subtracting the recording's own "
                "cost per call");
  add_filter_options(sub, o->filters, FilterOptionSet{false, false});
  add_terminal_options(sub, o->term);
  add_demangle_option(sub, o->demangle);
  sub->callback([o, &status] { status = run_replay(*o); });
}

const CommandRegistration registration_replay("replay", setup_replay);

}  // namespace
}  // namespace callmon::tools
