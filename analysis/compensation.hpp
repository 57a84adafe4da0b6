// Overhead compensation: applies the probe cost the runtime measured at start-up (the
// `overhead` line of a process's meta file) to a call walk, so reported times are close to
// the program's uninstrumented ones. On by default; `--no-compensation` turns it off.
#pragma once

#include "analysis/call_walk.hpp"
#include "callmon/format/records.hpp"
#include "format/process_meta.hpp"

namespace callmon::analysis {

// The probe cost per call compensation subtracts in one thread: the calibrated one, plus the
// host bursts expected in the exposed parts of the probes (where no burst check looks), at
// the rate the thread's fenced entry hooks caught them in the checked stretch most like
// those (no store to the trace): burst ticks per checked tick (docs/runtime.md, "Bursts
// between the checks"). Without the fenced clock's figures, or in a thread whose probes
// caught nothing there, just the calibrated cost.
inline format::ProbeCost thread_probe_cost(const format::ProbeCost& cost,
                                           const format::ThreadFileHeader& header) {
  format::ProbeCost c = cost;
  if (header.entry_checked_ticks == 0 || header.entry_burst_ticks == 0) return c;
  double rate = static_cast<double>(header.entry_burst_ticks) /
                static_cast<double>(header.entry_checked_ticks);
  c.inner_ticks += rate * cost.exposed_in_ticks;
  c.outer_ticks += rate * (cost.exposed_in_ticks + cost.exposed_out_ticks);
  return c;
}

// Makes `walker` subtract `meta`'s probe cost (thread_probe_cost for the thread of
// `header`) when `enabled` and the recording has one, and the recorder's pauses (PAUSE
// records) when `enabled`.
template <class Sink>
void apply_compensation(CallWalker<Sink>& walker, const format::ProcessMeta& meta,
                        const format::ThreadFileHeader& header, bool enabled) {
  walker.subtract_pauses(enabled);
  if (enabled && meta.probe_cost) {
    format::ProbeCost c = thread_probe_cost(*meta.probe_cost, header);
    walker.set_probe_cost(c.inner_ticks, c.outer_ticks);
  }
}

}  // namespace callmon::analysis
