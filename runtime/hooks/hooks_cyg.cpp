// Bodies of the -finstrument-functions hooks __cyg_profile_func_enter/exit, whose entry
// points (arch/x86_64/cyg_hooks.S) read the clock and come here. The common case is inline
// here (the entry's in cyg_fast_path.hpp, shared with the XRay mode): one TLS load, one test, a
// shadow-stack push or pop and a 1–4 byte record; everything else goes to hooks.cpp.
#include "runtime/core/clock.hpp"
#include "runtime/hooks/cyg_fast_path.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/hooks/hooks.hpp"

using namespace callmon::rt;

// Called only by the assembly hooks: hidden, C names.
#define CALLMON_CYG_BODY extern "C" __attribute__((no_instrument_function))

// `ticks`: the stub's rdtsc (arch/x86_64/cyg_hooks.S), or 0 when the clock is the monotonic
// one, which is read here. (The stub has tested g_clock_tsc already; a TSC never reads 0.)
static inline uint64_t stub_ticks(uint64_t ticks) {
  return __builtin_expect(ticks != 0, 1) ? ticks : monotonic_ns();
}

CALLMON_CYG_BODY void callmon_cyg_enter(void* this_fn, void* call_site, uint64_t ticks,
                                        uintptr_t sp) {
  // The stub read the clock first thing. (The fenced clock reads it again last, in
  // write_hook_enter: see event_writer.hpp.)
  cyg_enter_at_time<SlowPath::kDirect>(stub_ticks(ticks), reinterpret_cast<uintptr_t>(this_fn),
                                       reinterpret_cast<uintptr_t>(call_site), sp);
}

// What the exit body hands its stub, in rax and rdx: the time of the EXIT written here, or
// 0 from the slow paths, and where the stub adds the ticks from that EXIT to its last clock
// read when they are no burst (the fenced clock's covered_exit; cyg_hooks.S).
struct CygExitDone {
  uint64_t written;
  uint64_t* covered;
};

// Fenced, `ticks` was read after an lfence.
CALLMON_CYG_BODY CygExitDone callmon_cyg_exit(void* this_fn, void* /*call_site*/, uint64_t ticks,
                                              uintptr_t sp) {
  uint64_t t = stub_ticks(ticks);
  ThreadState* s = t_state;
  uintptr_t fn = reinterpret_cast<uintptr_t>(this_fn);
  if (__builtin_expect(s == nullptr || s->guard != 0, 0)) {
    int decision;
    if (Frame* f = filter_fast_exit_frame(s, fn, &decision)) {
      uint64_t written = cyg_exit_frame<SlowPath::kDirect>(s, f, t, decision);
      return {written, written ? &s->covered_exit : nullptr};
    }
    exit_slow(s, fn, sp, t, nullptr);
    return {0, nullptr};
  }
  Frame* f = s->top - 1;
  if (__builtin_expect(f < s->stack_base || f->fn != fn, 0)) {
    exit_slow(s, fn, sp, t, nullptr);
    return {0, nullptr};
  }
  uint64_t written = cyg_exit_frame<SlowPath::kDirect>(s, f, t);
  return {written, &s->covered_exit};
}

// A burst between the EXIT at `from` and the fenced exit stub's last read `to` (more than
// CALLMON_HOOK_BURST_TICKS). The hook's guard is released by now, so a signal handler may
// have written records since: then the gap was (partly) its time and nothing is written.
CALLMON_CYG_BODY void callmon_cyg_exit_pause(uint64_t from, uint64_t to) {
  ThreadState* s = t_state;
  if (s == nullptr || s->guard != 0) return;
  guard_acquire(s);
  signal_fence();
  write_exit_burst_pause(s, from, to);
  signal_fence();
  guard_release(s);
}
