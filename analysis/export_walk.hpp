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
#include "analysis/offload_sink.hpp"
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
  uint64_t record_bytes = 0;  // about how many bytes of records it holds (event_prefetch.hpp)
  bool names_on_walk = false;  // the walk looks names up in `symbols` (name filters)
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

// Opens, in order, every thread file of `rec` that `filters` (if given) keeps, with its
// process's symbolizer and module lifetimes applied: the one loop over a recording's
// readers that walk_recording and the exports' quick count (export_estimate.cpp) share.
// `on_process(proc, sym)` runs before a process's threads and returns a callable
// `on_thread(const format::ThreadFile&, format::ThreadReader&)`; each process's symbolizer
// warnings follow its threads' in the returned list. Errors: a thread file that cannot be
// opened.
template <class OnProcess>
Result<std::vector<std::string>> for_each_thread_reader(const format::Recording& rec,
                                                        const FilterSet* filters,
                                                        OnProcess&& on_process) {
  std::vector<std::string> warnings = rec.warnings;
  auto cache = make_elf_cache();
  for (const format::ProcessRecording& proc : rec.processes) {
    ProcessSymbolizer sym(proc.meta, cache);
    auto on_thread = on_process(proc, sym);
    format::ModuleLifetimes lifetimes(proc.meta.modules);
    for (const format::ThreadFile& tf : proc.threads) {
      if (filters && !filters->keeps_thread(tf.tid)) continue;
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return Error{opened.error()};
      format::ThreadReader& reader = opened.value();
      reader.use_module_lifetimes(lifetimes);
      on_thread(tf, reader, warnings);
    }
    on_thread.end(warnings);
    for (const std::string& w : sym.warnings()) warnings.push_back(w);
  }
  return warnings;
}

// Walks every thread of `rec`. The visitor provides:
//   void begin_process(const format::ProcessRecording&, ProcessSymbolizer&);
//   Sink& begin_thread(const ExportThread&);   // a call-walk sink (call_walk.hpp)
//   void end_thread(const ExportThread&);      // after the walker finished
//   void end_process(const format::ProcessRecording&, ProcessSymbolizer&);
// and may declare `static constexpr bool kOffload = true` when its sinks may run on a thread
// of their own (offload_sink.hpp: they ignore on_special, args and return values).
// `compensate` applies the recording's probe cost to `time`/`self` (compensation.hpp);
// `filters`, if given, selects threads and calls (filters.hpp: the sink sees the filtered
// tree). Errors: a thread file that cannot be opened. Returns the warnings otherwise.
template <class Visitor>
Result<std::vector<std::string>> walk_recording(const format::Recording& rec, bool compensate,
                                                const FilterSet* filters, Visitor& visitor) {
  struct ProcessWalk {
    const format::ProcessRecording& proc;
    ProcessSymbolizer& sym;
    const FilterSet* filters;
    bool compensate;
    Visitor& visitor;
    std::optional<NameDecider> names;
    void operator()(const format::ThreadFile& tf, format::ThreadReader& reader,
                    std::vector<std::string>& warnings) {
      ExportThread thread;
      thread.meta = &proc.meta;
      thread.symbols = &sym;
      thread.pid = proc.meta.pid;
      thread.tid = tf.tid;
      thread.record_bytes = analysis::record_bytes(reader);
      thread.names_on_walk = filters && filters->has_name_filter();
      const auto& name = reader.header().thread_name;
      thread.name.assign(name, strnlen(name, sizeof(name)));
      auto& sink = visitor.begin_thread(thread);
      using Sink = std::remove_reference_t<decltype(sink)>;
      uint64_t calls = 0;
      if (offloads(thread)) {
        OffloadSink<Sink> offload(sink);
        CountingSink<OffloadSink<Sink>> counting{offload};
        walk_filtered(reader, counting, filters, names ? &*names : nullptr, proc, tf,
                      compensate, [](uint64_t) {});
        offload.finish();
        calls = counting.calls;
      } else {
        CountingSink<Sink> counting{sink};
        walk_filtered(reader, counting, filters, names ? &*names : nullptr, proc, tf,
                      compensate, [](uint64_t) {});
        calls = counting.calls;
      }
      visitor.end_thread(thread);
      for (std::string& m : damage_messages(reader, calls)) warnings.push_back(std::move(m));
    }
    void end(std::vector<std::string>&) { visitor.end_process(proc, sym); }
    // The sink runs on a thread of its own (offload_sink.hpp) when the visitor allows it
    // (its sinks ignore on_special, args and return values), the thread is big enough for
    // the walk to decode ahead, two cores are free and the walk's name filters do not
    // share the symbolizer with the sink.
    static bool offloads(const ExportThread& thread) {
      if constexpr (requires { Visitor::kOffload; }) {
        return Visitor::kOffload && !thread.names_on_walk &&
               thread.record_bytes >= prefetch_min_bytes() && CoreBudget::global().free() >= 2;
      }
      return false;
    }
  };
  return for_each_thread_reader(
      rec, filters, [&](const format::ProcessRecording& proc, ProcessSymbolizer& sym) {
        ProcessWalk walk{proc, sym, filters, compensate, visitor, std::nullopt};
        if (filters) walk.names.emplace(*filters, sym);
        visitor.begin_process(proc, sym);
        return walk;
      });
}

template <class Visitor>
Result<std::vector<std::string>> walk_recording(const format::Recording& rec, bool compensate,
                                                Visitor& visitor) {
  return walk_recording(rec, compensate, nullptr, visitor);
}

}  // namespace callmon::analysis
