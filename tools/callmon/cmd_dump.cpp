// `callmon dump`: prints every decoded record of every thread file of a recording, one per
// line, after one line per file with its header. A debugging aid for the format: what the
// reader sees is exactly what the analyses see. ARGS and RETVAL records add their payload
// size and decoded values ("size=9 values: 1/i32=-5, 2/s=\"hi\""); records with a function
// address name it after the address (`fn=main`), as the analyses would.
#include <cstdio>
#include <fmt/format.h>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "analysis/symbolizer.hpp"
#include "analysis/thread_problems.hpp"
#include "format/module_lifetimes.hpp"
#include "format/arg_values.hpp"
#include "format/thread_reader.hpp"
#include "report/arg_text.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct DumpOptions {
  std::string dir = "callmon.data";
  std::optional<uint32_t> thread;
};

const char* type_name(format::Event::Type t) {
  switch (t) {
    case format::Event::kEnter: return "enter";
    case format::Event::kExit: return "exit";
    case format::Event::kUnwind: return "unwind";
    case format::Event::kEnd: return "end";
    case format::Event::kFork: return "fork";
    case format::Event::kExec: return "exec";
    case format::Event::kInherit: return "inherit";
    case format::Event::kLost: return "lost";
    case format::Event::kSync: return "sync";
    case format::Event::kPause: return "pause";
    case format::Event::kCalib: return "calib";
    case format::Event::kClock: return "clock";
    case format::Event::kHidden: return "hidden";
    case format::Event::kArgs: return "args";
    case format::Event::kRetval: return "retval";
  }
  return "?";
}

// " size=N values: POS/FMT=VALUE, ..." for an ARGS or RETVAL record, in payload order.
std::string payload_text(const format::Event& ev) {
  std::string out = fmt::format(" size={} values:", ev.size);
  auto values = format::decode_arg_values(ev.data, ev.size);
  if (!values) return out + " <bad values: " + values.error() + ">";
  for (size_t i = 0; i < values->size(); ++i) {
    const format::ArgValue& v = (*values)[i];
    out += fmt::format("{} {}/{}={}", i == 0 ? "" : ",", v.position, format::arg_format_name(v.format),
                       report::format_arg_value(v));
  }
  return out;
}

void header_line(fmt::memory_buffer& out, const format::ThreadReader& r) {
  const format::ThreadFileHeader& h = r.header();
  fmt::format_to(std::back_inserter(out),
                 "file {} pid={} tid={} key={} name=\"{}\" clock={} chunk_size={} "
                 "flags=0x{:x}{}{}{} start_ticks={} committed_end={} end_offset={} "
                 "unmatched_exits={} lost_events={} burst_ticks={} burst_count={} entry_checked_ticks={} entry_burst_ticks={}{} file_size={}\n",
                 r.path(), h.pid, h.tid, h.process_key, h.thread_name,
                 h.clock == 0 ? "tsc" : "monotonic", h.chunk_size, h.flags,
                 (h.flags & format::kFlagFinished) ? " finished" : "",
                 (h.flags & format::kFlagForkChild) ? " fork-child" : "",
                 (h.flags & format::kFlagStopped) ? " stopped" : "", h.start_ticks,
                 h.committed_end, h.end_offset, h.unmatched_exits, h.lost_events,
                 h.burst_ticks, h.burst_count, h.entry_checked_ticks, h.entry_burst_ticks,
                 h.tick_shift ? fmt::format(" tick_shift={}", h.tick_shift) : "", r.file_size());
}

// The name of the function a record's address points into, as the analyses resolve it (the
// address tagged with its module line when that module was replaced later); empty for a
// record without an address.
std::string function_name(const format::Event& ev, analysis::ProcessSymbolizer& sym,
                          const format::ModuleLifetimes& lifetimes) {
  bool has_function = ev.type == format::Event::kEnter || ev.type == format::Event::kExit ||
                      ev.type == format::Event::kUnwind || ev.type == format::Event::kArgs ||
                      ev.type == format::Event::kRetval;
  if (!has_function || ev.addr == 0) return {};
  return sym.lookup(lifetimes.tag(ev.addr, ev.ticks)).name;
}

// Dumps one thread file; false when it cannot be opened or the output fails.
bool dump_file(const std::string& cmd, const std::string& path, analysis::ProcessSymbolizer& sym,
               const format::ModuleLifetimes& lifetimes) {
  auto r = format::ThreadReader::open(path);
  if (!r) {
    fail(cmd, r.error());
    return false;
  }
  fmt::memory_buffer out;
  header_line(out, *r);
  format::Event ev;
  bool ok = true;
  while (r->next(ev)) {
    fmt::format_to(std::back_inserter(out), "{} ticks={} addr=0x{:x} count={} reason={} nested={}",
                   type_name(ev.type), ev.ticks, ev.addr, ev.count, ev.reason,
                   ev.nested ? 1 : 0);
    if (ev.type == format::Event::kHidden)
      fmt::format_to(std::back_inserter(out), " capture={}", ev.capture);
    if (std::string name = function_name(ev, sym, lifetimes); !name.empty())
      fmt::format_to(std::back_inserter(out), " fn={}", name);
    if (ev.type == format::Event::kArgs || ev.type == format::Event::kRetval) {
      const std::string values = payload_text(ev);
      out.append(values.data(), values.data() + values.size());
    }
    out.push_back('\n');
    if (out.size() >= (1 << 16)) {
      ok = ok && std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
      out.clear();
    }
  }
  ok = ok && std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
  std::fflush(stdout);
  if (std::string stopped = analysis::stopped_message(*r); !stopped.empty()) warn(cmd, stopped);
  for (const std::string& note : r->damage().notes) warn(cmd, path + ": " + note);
  if (!ok) fail(cmd, "cannot write the output");
  return ok;
}

int run_dump(const DumpOptions& o) {
  const std::string cmd = "dump";
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  bool ok = true;
  size_t dumped = 0;
  auto cache = analysis::make_elf_cache();
  for (const auto& proc : rec->processes) {
    analysis::ProcessSymbolizer sym(proc.meta, cache);
    format::ModuleLifetimes lifetimes(proc.meta.modules);
    for (const auto& t : proc.threads) {
      if (o.thread && t.tid != *o.thread) continue;
      ++dumped;
      ok = dump_file(cmd, t.path, sym, lifetimes) && ok;
    }
  }
  if (o.thread && dumped == 0)
    return fail(cmd, fmt::format("{}: no thread {} in this recording", o.dir, *o.thread));
  return ok ? 0 : 1;
}

void setup_dump(CLI::App& app, int& status) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* sub = app.add_subcommand(
      "dump", "Print every decoded record of every thread file (a format debugging aid)");
  add_recording_option(sub, o->dir);
  sub->add_option("--thread", o->thread, "dump only the files of this thread id")
      ->type_name("TID");
  sub->callback([o, &status] { status = run_dump(*o); });
}

const CommandRegistration registration_dump("dump", setup_dump);

}  // namespace
}  // namespace callmon::tools
