// Overhead compensation: applies the probe cost the runtime measured at start-up (the
// `overhead` line of a process's meta file) to a call walk, so reported times are close to
// the program's uninstrumented ones. On by default; `--no-compensation` turns it off.
#pragma once

#include <algorithm>
#include <optional>

#include "analysis/call_walk.hpp"
#include "callmon/format/records.hpp"
#include "format/recording.hpp"

namespace callmon::analysis {

// The probe cost per call compensation subtracts in a process: the calibrated one, plus the
// host bursts expected in the exposed parts of the probes (where no burst check looks), at
// the rate the process's fenced entry hooks caught them in the checked stretch most like
// those (no store to the trace): burst ticks per checked tick, summed over its threads
// (docs/runtime.md, "Bursts between the checks"). Pooled, not per thread: the bursts are
// the host's, and a thread of a few calls that caught one gets a rate of 1 or more on its
// own (2.7 to 120 in 3 of the 3201 threads of tests/programs/stress_threads.c, fenced).
// Without the fenced clock's figures, or if the probes caught nothing there, just the
// calibrated cost.
inline format::ProbeCost probe_cost_with_bursts(const format::ProbeCost& cost,
                                                uint64_t checked_ticks, uint64_t burst_ticks) {
  format::ProbeCost c = cost;
  if (checked_ticks == 0 || burst_ticks == 0) return c;
  double rate = static_cast<double>(burst_ticks) / static_cast<double>(checked_ticks);
  c.inner_ticks += rate * cost.exposed_in_ticks;
  c.outer_ticks += rate * (cost.exposed_in_ticks + cost.exposed_out_ticks);
  return c;
}

// The probe cost compensation subtracts in `proc`: its cheapest calibration with the
// bursts expected over its threads (above); none when the process has no calibration.
inline std::optional<format::ProbeCost> process_probe_cost(const format::ProcessRecording& proc) {
  std::optional<format::ProbeCost> cost = proc.meta.probe_cost();
  if (!cost) return std::nullopt;
  return probe_cost_with_bursts(*cost, proc.entry_checked_ticks, proc.entry_burst_ticks);
}

// What the call walk charges the probes in `proc` until a thread's first calibration in the
// run: process_probe_cost, uncertain between its calibrations' cheapest and dearest (start-up
// and exit), by kCalibrationNoise at least. None without a calibration.
inline std::optional<WalkCost> process_walk_cost(const format::ProcessRecording& proc) {
  std::optional<format::ProbeCost> c = process_probe_cost(proc);
  if (!c) return std::nullopt;
  std::optional<format::ProbeCost> calibrated = proc.meta.probe_cost();
  WalkCost w;
  w.inner = c->inner_ticks;
  w.outer = c->outer_ticks;
  w.extra_inner = c->inner_ticks - calibrated->inner_ticks;
  w.extra_outer = c->outer_ticks - calibrated->outer_ticks;
  double hi = calibrated->outer_ticks;
  for (const format::ProbeCost& k : proc.meta.calibrations)
    if (k.measured()) hi = std::max(hi, k.outer_ticks);
  w.low = 1 - kCalibrationNoise;
  w.high = std::max(1 + kCalibrationNoise, hi / calibrated->outer_ticks);
  // The overlap, as the calibration measured it. A recording from before that measurement:
  // up to half a probe pair either way, what it measured on this project's VMs at most.
  bool measured = calibrated->overlap_up_ticks >= 0;
  w.overlap_up = measured ? calibrated->overlap_up_ticks : calibrated->outer_ticks / 2;
  w.overlap_down = measured ? calibrated->overlap_down_ticks : calibrated->outer_ticks / 2;
  // Unrecorded calls' pairs, with the bursts expected in them as in a recorded one's.
  const double bursts = c->outer_ticks / calibrated->outer_ticks;
  if (calibrated->hidden_ticks > 0) w.hidden = calibrated->hidden_ticks * bursts;
  if (calibrated->taken_back_ticks > 0) w.taken_back = calibrated->taken_back_ticks * bursts;
  // Library calls: their probe's own cost, as its difference from the other calls' probe
  // in the same calibration (the chosen one's, else the first that measured it). Without
  // one (an older recording, --no-libcall) they are charged as the other calls.
  const format::ProbeCost* lib = calibrated->libcall_outer_ticks > 0 ? &*calibrated : nullptr;
  for (const format::ProbeCost& k : proc.meta.calibrations)
    if (!lib && k.measured() && k.libcall_outer_ticks > 0) lib = &k;
  if (lib) {
    // Never below nothing: a library call's pair costs at least 0 on either side.
    w.libcall_extra_inner = std::max(lib->libcall_inner_ticks - lib->inner_ticks, -w.inner);
    w.libcall_extra_outer = std::max(lib->libcall_outer_ticks - lib->outer_ticks, -w.outer);
  }
  return w;
}

// Sets `walker` up for a thread of `proc`: its off-CPU intervals (always: the blocked and
// preempted times are counted either way) and, when `enabled`, compensation: the probe
// cost of `proc` (process_probe_cost) when the recording has one, the recorder's pauses
// and the preempted intervals taken out.
template <class Sink>
void apply_compensation(CallWalker<Sink>& walker, const format::ProcessRecording& proc,
                        const format::ThreadFile& thread, bool enabled) {
  walker.set_offcpu(&thread.offcpu);
  walker.set_clock_helper_limit(static_cast<uint64_t>(proc.meta.ticks_per_second * 5e-6));
  walker.subtract_pauses(enabled);
  if (!enabled) return;
  if (std::optional<WalkCost> c = process_walk_cost(proc)) {
    walker.set_cost(*c);
    if (c->libcall_extra_outer != 0 || c->libcall_extra_inner != 0)
      walker.set_libcall_functions(&proc.meta.libcall_functions);
  }
}

}  // namespace callmon::analysis
