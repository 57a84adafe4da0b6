// The runtime's clock: the TSC (rdtsc) where it is invariant, else CLOCK_MONOTONIC in ns.
// The choice is made once per process; readers convert ticks with the rate in the meta file.
#pragma once

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstdint>

namespace callmon::rt {

// True when ticks come from rdtsc. Written once at process set-up, before any thread
// records, and only read afterwards. (C names: the assembly hooks read both flags.)
extern "C" bool g_clock_tsc;

// True with `--clock=tsc-fenced` (g_clock_tsc is then true too): the hooks order their
// clock reads against the function's own instructions. Same lifetime as g_clock_tsc.
extern "C" bool g_clock_fenced;

// The clock's step, 2^g_tick_shift ticks (every reading a multiple of it), measured when the
// clock is chosen; the unit of the ENTER and EXIT deltas in the files opened afterwards
// (docs/format.md, "Version 7"). Same lifetime as g_clock_tsc.
extern uint32_t g_tick_shift;

// libc's clock_gettime (interpose_clock.cpp interposes the program's): the runtime's own
// reads but CLOCK_MONOTONIC's (monotonic_ns, below) go to it directly, never through the
// interposer. Null until the library's constructor ran; the system call serves until then.
extern "C" int (*g_real_clock_gettime)(clockid_t, timespec*);

inline uint64_t clock_ns(clockid_t id) {
  timespec ts;
  if (auto f = __atomic_load_n(&g_real_clock_gettime, __ATOMIC_RELAXED); __builtin_expect(f != nullptr, 1))
    f(id, &ts);
  else
    syscall(SYS_clock_gettime, id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// CLOCK_MONOTONIC in ns, from the vDSO without libc (vdso_clock.cpp): safe on the hooks'
// per-call slow paths, which keep only part of the vector state (slow_call.hpp).
extern "C" uint64_t callmon_monotonic_ns();
inline uint64_t monotonic_ns() { return callmon_monotonic_ns(); }

// This thread's CPU time (a system call: not for the hot path).
inline uint64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

// The hot-path clock read. rdtsc is not serializing, which is what we want by default: the
// probe's own instructions run while the function's do, and lfence would double the cost.
// The price is that a small function's dependent work partly hides under the probes, and
// a long one's last instructions finish after its exit's clock read (docs/runtime.md,
// "Overhead compensation"); the fenced clock below trades cost for exact intervals.
inline uint64_t read_ticks() { return g_clock_tsc ? __rdtsc() : monotonic_ns(); }

// The fenced clock's read: lfence waits for everything before it (the caller's work, the
// hook's own bookkeeping) to complete before rdtsc. An entry hook takes it just before it
// writes its record (the fast paths in write_hook_enter, event_writer.hpp); entry_done()
// then keeps the function's first instructions from starting before the record is written.
inline uint64_t fenced_ticks() {
  _mm_lfence();
  return __rdtsc();
}

// The slow paths' entry read: the fenced one or the plain one.
inline uint64_t entry_ticks() {
  return __builtin_expect(g_clock_fenced, 0) ? fenced_ticks() : read_ticks();
}

// The entry hook's last step. Fenced: what the hook does after its clock read (encoding
// and storing the record) completes before the function starts, so the function's own
// work never overlaps it; that part of the hook is then a constant the calibration
// measures.
inline void entry_done() {
  if (__builtin_expect(g_clock_fenced, 0)) _mm_lfence();
}

// The clock read of an exit hook, its first step. Fenced: lfence waits for the function's
// last instructions to complete, so they are counted in it, not in its caller.
inline uint64_t exit_ticks() {
  if (__builtin_expect(g_clock_fenced, 0)) _mm_lfence();
  return read_ticks();
}

// Chooses the clock from the option ("tsc", "tsc-fenced", "monotonic", "auto") and the
// CPU's flags, and returns the tick rate: `tsc_hz_hint` when given (measured by `callmon
// record`), else a short calibration against CLOCK_MONOTONIC. Call once per process image.
double setup_clock(const char* option, double tsc_hz_hint);

}  // namespace callmon::rt
