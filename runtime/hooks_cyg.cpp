// Entry points for -finstrument-functions: __cyg_profile_func_enter/exit. The common case
// is inline here: one TLS load, one test, rdtsc, a shadow-stack push or pop and a 1–4 byte
// record; everything else goes to hooks.cpp.
#include "runtime/clock.hpp"
#include "runtime/event_writer.hpp"
#include "runtime/hooks.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default"), no_instrument_function))

// Frame address of the hook: the instrumented function's stack pointer at the call minus 16
// (return address + saved rbp; the runtime keeps frame pointers). Deeper calls get smaller
// values; see Frame in thread_state.hpp.
#define HOOK_SP() reinterpret_cast<uintptr_t>(__builtin_frame_address(0))

CALLMON_EXPORT void __cyg_profile_func_enter(void* this_fn, void* call_site) {
  // The clock first: rdtsc's latency then overlaps the loads and checks below. (The fenced
  // clock reads it again last, in write_hook_enter: see event_writer.hpp.)
  uint64_t t = read_ticks();
  ThreadState* s = t_state;
  uintptr_t fn = reinterpret_cast<uintptr_t>(this_fn);
  if (__builtin_expect(s == nullptr || s->guard != 0 || s->top == s->stack_limit, 0)) {
    enter_slow(s, fn, HOOK_SP(), reinterpret_cast<uintptr_t>(call_site));
    return;
  }
  guard_acquire(s);
  signal_fence();
  Frame* f = s->top;
  s->top = f + 1;
  signal_fence();  // the slot is ours before we fill it: a signal's hooks push above it
  f->fn = fn;
  f->sp = HOOK_SP();
  f->ret = 0;  // no return address to put back (pg_restore_returns skips the frame)
  write_hook_enter(s, t, fn);
  signal_fence();
  guard_release(s);
  entry_done();
}

CALLMON_EXPORT void __cyg_profile_func_exit(void* this_fn, void* /*call_site*/) {
  uint64_t t = exit_ticks();
  ThreadState* s = t_state;
  uintptr_t fn = reinterpret_cast<uintptr_t>(this_fn);
  if (__builtin_expect(s == nullptr || s->guard != 0, 0)) {
    exit_slow(s, fn, HOOK_SP());
    return;
  }
  Frame* f = s->top - 1;
  if (__builtin_expect(f < s->stack_base || f->fn != fn, 0)) {
    exit_slow(s, fn, HOOK_SP());
    return;
  }
  guard_acquire(s);
  signal_fence();
  s->top = f;
  write_hook_exit(s, t);
  signal_fence();
  guard_release(s);
}
