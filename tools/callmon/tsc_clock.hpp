// The TSC's rate for `callmon record` and `callmon run`, and the (TSC, CLOCK_MONOTONIC) pairs
// the scheduler recorder puts in its file: the tools' side of the clock that the runtime's
// hooks read (docs/format.md, the sync pairs; docs/runtime.md, "Scheduler time").
#pragma once

#include <cstdint>

namespace callmon::tools {

// TSC ticks per second measured against CLOCK_MONOTONIC between tsc_measure_start() and
// tsc_measure_finish(), which sleeps only what is left of `min_span_ns`: the start is taken
// before callmon's own start-up work so the interval costs the program's launch nothing.
// Each end is read within a fraction of a microsecond, so 3 ms give the rate to ~2e-5; the
// runtime refines it over runs longer than 100 ms (its sync pairs, docs/format.md).
// Returns 0 when the clock did not advance.
struct TscStart {
  uint64_t tsc = 0;
  uint64_t ns = 0;
};
TscStart tsc_measure_start();
// One (TSC, CLOCK_MONOTONIC ns) pair read within a fraction of a microsecond: the tightest
// of a few tries, the ns at the middle of the TSC read's bracket.
void read_clock_pair(uint64_t& tsc, uint64_t& ns);
double tsc_measure_finish(const TscStart& start, uint64_t min_span_ns = 3000000);

}  // namespace callmon::tools
