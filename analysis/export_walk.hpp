// The walk every `callmon export` format shares: visits each process of a recording with its
// symbolizer, then each of its thread files with a CallWalker over a sink the visitor
// supplies, so a format only writes the sink (streamed output or a bounded aggregate).
// Damage and symbolization problems come back as warnings, as `callmon report` gives them.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/compensation.hpp"
#include "analysis/filters.hpp"
#include "analysis/symbolizer.hpp"
#include "analysis/thread_problems.hpp"
#include "format/module_lifetimes.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

// One thread file about to be walked.
struct ExportThread {
  const format::ProcessMeta* meta = nullptr;
  ProcessSymbolizer* symbols = nullptr;
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string name;  // the thread's name from its header, may be empty
};

// A point on the recording's clock in nanoseconds (ticks scaled by the process's clock
// rate; not shifted, so threads and processes of one recording share the time line).
inline double ticks_to_time_ns(const format::ProcessMeta& meta, uint64_t ticks) {
  return meta.ticks_to_ns(ticks);
}

// Forwards to a visitor's sink and counts the finished calls (for the damage sentences).
template <class Sink>
struct CountingSink {
  Sink& inner;
  uint64_t calls = 0;
  void on_enter_clock(uint64_t vticks) {
    if constexpr (EnterClockSink<Sink>) inner.on_enter_clock(vticks);
  }
  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited) {
    return inner.on_enter(addr, ticks, depth, inherited);
  }
  void on_call(const FinishedCall& call) {
    ++calls;
    inner.on_call(call);
  }
  void on_special(const format::Event& ev, uint32_t depth) { inner.on_special(ev, depth); }
};

// Walks every thread of `rec`. The visitor provides:
//   void begin_process(const format::ProcessRecording&, ProcessSymbolizer&);
//   Sink& begin_thread(const ExportThread&);   // a call-walk sink (call_walk.hpp)
//   void end_thread(const ExportThread&);      // after the walker finished
//   void end_process(const format::ProcessRecording&, ProcessSymbolizer&);
// `compensate` applies the recording's probe cost to `time`/`self` (compensation.hpp);
// `filters`, if given, selects threads and calls (filters.hpp: the sink sees the filtered
// tree). Errors: a thread file that cannot be opened. Returns the warnings otherwise.
template <class Visitor>
Result<std::vector<std::string>> walk_recording(const format::Recording& rec, bool compensate,
                                                const FilterSet* filters, Visitor& visitor) {
  std::vector<std::string> warnings = rec.warnings;
  auto cache = make_elf_cache();
  for (const format::ProcessRecording& proc : rec.processes) {
    ProcessSymbolizer sym(proc.meta, cache);
    std::optional<NameDecider> names;
    if (filters) names.emplace(*filters, sym);
    visitor.begin_process(proc, sym);
    format::ModuleLifetimes lifetimes(proc.meta.modules);
    for (const format::ThreadFile& tf : proc.threads) {
      if (filters && !filters->keeps_thread(tf.tid)) continue;
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return Error{opened.error()};
      format::ThreadReader& reader = opened.value();
      reader.use_module_lifetimes(lifetimes);
      ExportThread thread;
      thread.meta = &proc.meta;
      thread.symbols = &sym;
      thread.pid = proc.meta.pid;
      thread.tid = tf.tid;
      const auto& name = reader.header().thread_name;
      thread.name.assign(name, strnlen(name, sizeof(name)));
      auto& sink = visitor.begin_thread(thread);
      CountingSink<std::remove_reference_t<decltype(sink)>> counting{sink};
      walk_filtered(reader, counting, filters, names ? &*names : nullptr, proc, tf, compensate,
                    [](uint64_t) {});
      visitor.end_thread(thread);
      for (std::string& m : damage_messages(reader, counting.calls))
        warnings.push_back(std::move(m));
    }
    visitor.end_process(proc, sym);
    for (const std::string& w : sym.warnings()) warnings.push_back(w);
  }
  return warnings;
}

template <class Visitor>
Result<std::vector<std::string>> walk_recording(const format::Recording& rec, bool compensate,
                                                Visitor& visitor) {
  return walk_recording(rec, compensate, nullptr, visitor);
}

}  // namespace callmon::analysis
