// Overhead compensation: applies the probe cost the runtime measured at start-up (the
// `overhead` line of a process's meta file) to a call walk, so reported times are close to
// the program's uninstrumented ones. On by default; `--no-compensation` turns it off.
#pragma once

#include "analysis/call_walk.hpp"
#include "format/process_meta.hpp"

namespace callmon::analysis {

// Makes `walker` subtract `meta`'s probe cost when `enabled` and the recording has one,
// and the recorder's pauses (PAUSE records) when `enabled`.
template <class Sink>
void apply_compensation(CallWalker<Sink>& walker, const format::ProcessMeta& meta,
                        bool enabled) {
  walker.subtract_pauses(enabled);
  if (enabled && meta.probe_cost)
    walker.set_probe_cost(meta.probe_cost->inner_ticks, meta.probe_cost->outer_ticks);
}

}  // namespace callmon::analysis
