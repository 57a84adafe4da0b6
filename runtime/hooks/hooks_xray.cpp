// The bodies of the XRay mode's trampolines (arch/x86_64/xray_trampolines.S). They record
// what the -finstrument-functions hooks do (hooks_cyg.cpp: the entry's fast path is
// cyg_fast_path.hpp's), but run behind trampolines that keep no vector state: their fast paths
// are integer code that calls nothing, and every slow path (thread set-up, the monotonic
// clock, the rare guards, filters, tail calls) goes through slow_call or slow_call_hot
// (core/slow_call.hpp) as the -pg hooks' do (hooks_pg.cpp; docs/patching.md "Vector
// registers"). tests/audit/fast_path_audit.py checks the built library keeps to it. A sled
// sits at a call boundary (a function's entry, its `ret`, a tail call), so the hot slow
// paths are the Reach::kCall instances (hooks.hpp), which a monitor's callbacks may run in.
//
// The exit differs from callmon_cyg_exit in tail calls. A tail call to an instrumented function keeps its sled unpatched
// (xray_sleds.cpp): the caller's frame stays open and the called function's frame, whose
// entry stack pointer is the caller's (the caller's frame is gone, the return address is
// the same), nests in it. The one return ends both, as a -pg mode ends the frames sharing a
// return slot: after the innermost frame, every frame below it with the same `sp` is
// closed too (a frame's sp is always above its callees' otherwise). A tail call to anything
// else (through the PLT, indirect, to an unrecorded function) is a patched tail sled: its
// body keeps the caller's frame open and redirects the caller's return address to the -pg
// exit trampoline (callmon_pg_return), which ends the frames sharing that return when the
// called function returns, as in the -pg modes (hooks_pg.cpp) — the one return in such a
// chain that is mispredicted.
#include "runtime/core/clock.hpp"
#include "runtime/core/slow_call.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/hooks/cyg_fast_path.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/recording/event_writer.hpp"

using namespace callmon::rt;

extern "C" {
void callmon_pg_return();       // pg_return.S
void callmon_patched_return();  // patch_entry.S
}

#define CALLMON_XRAY_BODY extern "C" __attribute__((no_instrument_function))

namespace {

// Closes the frames at the top of the shadow stack whose sp is `sp`: functions that
// tail-called the one whose exit was just recorded. Rare (a tail call), so out of line.
// `saved`: the exit trampoline's save area of the return values, or nullptr (exit_slow).
template <Reach kReach>
__attribute__((noinline)) void close_tail_callers(uintptr_t sp, uint64_t t,
                                                  const uint64_t* saved) {
  ThreadState* s = t_state;
  if constexpr (kReach != Reach::kFull) {
    if (!hot_reach_ok<kReach>(s)) {
      slow_call(&close_tail_callers<Reach::kFull>, sp, t, saved);
      return;
    }
  }
  if (!s || (s->guard & kGuardStopped) || s->overflow_depth) return;
  if (s->top == s->stack_base || s->top[-1].sp != sp) return;
  if (s->guard & kGuardMonitor) {  // the tail callers' exits go to the monitor's callbacks
    bool nested = guard_enter(s);
    if (!nested) {
      Frame* low = s->top;
      while (low > s->stack_base && low[-1].sp == sp) --low;
      monitor_end_frames(s, low, t, kExitNormal);
    }
    guard_leave(s);
    return;
  }
  // One of them redirected the return (a patched tail sled): the function returns through
  // the -pg exit trampoline, which ends them all (hooks_pg.cpp).
  for (const Frame* f = s->top; f > s->stack_base && f[-1].sp == sp; --f)
    if (f[-1].ret) return;
  [[maybe_unused]] SlowErrno<kReach> es;
  bool nested = guard_enter(s);
  while (s->top > s->stack_base && s->top[-1].sp == sp) {
    Frame* f = s->top - 1;
    pop_frame(s, f);
    if (!frame_recorded(s, f)) {
      note_filtered(s, nested, t);
    } else if (!take_back_short(s, nested, f, t)) {
      put_exit(s, nested, t);
      put_retval_if_wanted(s, nested, t, f, saved);  // a tail call's frames: the one value
    }
  }
  guard_leave(s);
}

// The exit when the fast path cannot take it (no thread state, a guard set, not the
// innermost frame), and the tail callers it may close; kCall through slow_call_hot.
template <Reach kReach>
void xray_exit_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                    const uint64_t* saved) {
  if constexpr (kReach == Reach::kFull) exit_slow(s, fn, sp, t, saved);
  else exit_slow_call(s, fn, sp, t, saved);
  close_tail_callers<kReach>(sp, t, saved);
}

// The entry on the monotonic clock, whose read is a call into libc (clock_gettime).
void xray_enter_monotonic(uintptr_t fn, uintptr_t site, uintptr_t sp, const uint64_t* saved) {
  cyg_enter_at_time<SlowPath::kVectorSafe>(monotonic_ns(), fn, site, sp, saved);
}

}  // namespace

// The entry trampoline's body: callmon_cyg_enter's work with its slow paths behind
// slow_call. `ticks`: the trampoline's rdtsc, or 0 on the monotonic clock. `sp`: the
// function's stack pointer at its entry minus 16. `saved`: the trampoline's save area of the
// argument registers, for -A (xray_enter_slow).
CALLMON_XRAY_BODY void callmon_xray_enter_body(void* this_fn, void* call_site, uint64_t ticks,
                                               uintptr_t sp, const uint64_t* saved) {
  uintptr_t fn = reinterpret_cast<uintptr_t>(this_fn);
  uintptr_t site = reinterpret_cast<uintptr_t>(call_site);
  if (__builtin_expect(ticks == 0, 0)) {
    slow_call_hot(&xray_enter_monotonic, fn, site, sp, saved);
    return;
  }
  cyg_enter_at_time<SlowPath::kVectorSafe>(ticks, fn, site, sp, saved);
}

// What the exit body hands its trampoline in rax and rdx, as callmon_cyg_exit does (the
// time of the EXIT written on the fast path, or 0, and the thread's covered_exit).
struct XrayExitDone {
  uint64_t written;
  uint64_t* covered;
};

// `ticks`: the trampoline's rdtsc, or 0 on the monotonic clock. `sp`: the function's stack
// pointer at its entry minus 16.
namespace {

// The end of an exit whose innermost frame `f` was popped (its EXIT at `written`, or 0):
// the frames of functions that tail-called it are closed too.
__attribute__((always_inline)) inline XrayExitDone xray_exit_popped(ThreadState* s, Frame* f,
                                                                    uintptr_t sp, uint64_t t,
                                                                    uint64_t written,
                                                                    const uint64_t* saved) {
  if (__builtin_expect(f > s->stack_base && f[-1].sp == sp, 0)) {  // tail callers: rare
    slow_call_hot(&close_tail_callers<Reach::kCall>, sp, t, saved);
    return {0, nullptr};
  }
  return {written, written ? &s->covered_exit : nullptr};
}

// The exit's fast path at `t`; `saved` as xray_exit_slow's.
__attribute__((always_inline)) inline XrayExitDone xray_exit_at_time(uint64_t t, uintptr_t fn,
                                                                     uintptr_t sp,
                                                                     const uint64_t* saved) {
  ThreadState* s = t_state;
  if (__builtin_expect(s == nullptr || s->guard != 0, 0)) {
    int decision;
    if (Frame* f = filter_fast_exit_frame(s, fn, &decision))
      return xray_exit_popped(s, f, sp, t,
                              cyg_exit_frame<SlowPath::kVectorSafe>(s, f, t, decision), saved);
    if (s == nullptr || (s->guard & ~kCallHotGuards))
      slow_call(&xray_exit_slow<Reach::kFull>, s, fn, sp, t, saved);
    else
      slow_call_hot(&xray_exit_slow<Reach::kCall>, s, fn, sp, t, saved);
    return {0, nullptr};
  }
  Frame* f = s->top - 1;
  if (__builtin_expect(f < s->stack_base || f->fn != fn, 0)) {
    slow_call_hot(&xray_exit_slow<Reach::kCall>, s, fn, sp, t, saved);
    return {0, nullptr};
  }
  return xray_exit_popped(s, f, sp, t, cyg_exit_frame<SlowPath::kVectorSafe>(s, f, t), saved);
}

// The exit on the monotonic clock (never fenced: the trampoline ignores the result).
void xray_exit_monotonic(uintptr_t fn, uintptr_t sp, const uint64_t* saved) {
  xray_exit_at_time(monotonic_ns(), fn, sp, saved);
}

}  // namespace

// `ticks`: the trampoline's rdtsc, or 0 on the monotonic clock. `sp`: the function's stack
// pointer at its entry minus 16. `saved`: the trampoline's save area of the return values,
// for -R (exit_slow), or nullptr (a tail sled's, before the tail call: no value yet).
CALLMON_XRAY_BODY XrayExitDone callmon_xray_exit_body(void* this_fn, void* /*call_site*/,
                                                     uint64_t ticks, uintptr_t sp,
                                                     const uint64_t* saved) {
  uintptr_t fn = reinterpret_cast<uintptr_t>(this_fn);
  if (__builtin_expect(ticks == 0, 0)) {
    slow_call_hot(&xray_exit_monotonic, fn, sp, saved);
    return {0, nullptr};
  }
  return xray_exit_at_time(ticks, fn, sp, saved);
}

// A patched tail sled of `this_fn` (the tail call follows): the function's frame stays
// open and its return goes through the -pg exit trampoline, unless it cannot (another hook
// of the thread is active, the frame is not the innermost): then its exit is recorded
// here, before the tail call.
CALLMON_XRAY_BODY XrayExitDone callmon_xray_tail_body(void* this_fn, void* call_site,
                                                     uint64_t ticks, uintptr_t sp) {
  ThreadState* s = t_state;
  uintptr_t fn = reinterpret_cast<uintptr_t>(this_fn);
  auto* slot = reinterpret_cast<uintptr_t*>(sp + 16);  // the function's return address
  // Also while an exception propagates (a destructor's tail call in a landing pad): the
  // unwinder's hooks put the redirected return back and redirect it again as for the -pg
  // modes' (hooks.cpp, note_throw / note_catch).
  constexpr uint32_t kNot = kGuardBusyMask | kGuardOverflow | kGuardStopped | kGuardMonitor |
                            kGuardRuntime;
  if (s != nullptr && (s->guard & kNot) == 0) {
    Frame* f = s->top - 1;
    if (f >= s->stack_base && f->fn == fn && f->sp == sp && f->ret == 0) {
      uintptr_t ret = *slot;
      if (ret == reinterpret_cast<uintptr_t>(&callmon_pg_return) ||
          ret == reinterpret_cast<uintptr_t>(&callmon_patched_return))
        return {0, nullptr};  // a frame below with the same return redirected it already
      // The real address first: a signal's unwinder restores slots from frames' ret.
      f->ret = ret;
      signal_fence();
      *slot = reinterpret_cast<uintptr_t>(&callmon_pg_return);
      return {0, nullptr};
    }
  }
  return callmon_xray_exit_body(this_fn, call_site, ticks, sp, nullptr);
}
