// The runtime's clock: the TSC (rdtsc) where it is invariant, else CLOCK_MONOTONIC in ns.
// The choice is made once per process; readers convert ticks with the rate in the meta file.
#pragma once

#include <time.h>
#include <x86intrin.h>

#include <cstdint>

namespace callmon::rt {

// True when ticks come from rdtsc. Written once at process set-up, before any thread
// records, and only read afterwards.
extern bool g_clock_tsc;

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The hot-path clock read. rdtsc is not serializing, which is what we want: ordering within
// a few cycles does not matter for a call's duration, and lfence would double the cost.
inline uint64_t read_ticks() { return g_clock_tsc ? __rdtsc() : monotonic_ns(); }

// Chooses the clock from the option ("tsc", "monotonic", "auto") and the CPU's flags, and
// returns the tick rate: `tsc_hz_hint` when given (measured by `callmon record`), else a
// short calibration against CLOCK_MONOTONIC. Call once per process image.
double setup_clock(const char* option, double tsc_hz_hint);

}  // namespace callmon::rt
