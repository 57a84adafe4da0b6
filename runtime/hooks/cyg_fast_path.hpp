// The fast paths of the -finstrument-functions hooks (hooks_cyg.cpp), shared with the XRay
// bodies (hooks_xray.cpp). Inlined into each: the cyg hook is an ordinary call the
// compiler already saves the vector registers around, so it goes to its slow path directly;
// the XRay trampolines save nothing but the argument registers, so the XRay body reaches
// every slow path through slow_call (core/slow_call.hpp, docs/patching.md "Vector
// registers"), as the -pg hooks do.
#pragma once

#include <cstdint>

#include "runtime/core/slow_call.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/recording/event_writer.hpp"

namespace callmon::rt {

// How the entry reaches enter_slow.
enum class SlowPath {
  kDirect,       // a plain call (the -finstrument-functions hooks)
  kVectorSafe,   // slow_call for a thread's set-up and the rare guards, else slow_call_hot
                 // (the XRay bodies)
};

// Records the entry of `fn` at `t` (the hook's clock read); `sp` is the frame the exit
// matches, `site` the call site.
template <SlowPath kSlow>
__attribute__((always_inline)) inline void cyg_enter_at_time(uint64_t t, uintptr_t fn,
                                                             uintptr_t site, uintptr_t sp) {
  ThreadState* s = t_state;
  if (__builtin_expect(s == nullptr || s->guard != 0 || s->top == s->stack_limit, 0)) {
    if constexpr (kSlow == SlowPath::kDirect)
      enter_slow(s, fn, sp, site, t);
    else if (s == nullptr || (s->guard & ~kCallHotGuards))
      slow_call(&enter_slow, s, fn, sp, site, t);
    else  // an XRay sled: a call boundary (hooks.hpp, Reach::kCall)
      slow_call_hot(&enter_slow_call, s, fn, sp, site, t);
    return;
  }
  guard_acquire(s);
  signal_fence();
  push_frame(s, fn, sp, 0);  // no return address to put back (pg_restore_returns skips it)
  // The cyg hooks' out-of-line records are plain calls, as enter_slow is (event_writer.hpp).
  write_hook_enter<kSlow == SlowPath::kDirect ? Via::kDirect : Via::kHot>(s, t, fn);
  signal_fence();
  guard_release(s);
  entry_done();
}

// The exits' common step: pops the innermost frame `f` (the returning function's) and writes
// its EXIT at `t`; returns the time the EXIT carries (the fenced clock's burst check starts
// there: cyg_hooks.S). kSlow as for the entry: how its out-of-line EXIT is reached.
template <SlowPath kSlow>
__attribute__((always_inline)) inline uint64_t cyg_exit_frame(ThreadState* s, Frame* f,
                                                              uint64_t t) {
  guard_acquire(s);
  signal_fence();
  pop_frame(s, f);
  write_exit<kSlow == SlowPath::kDirect ? Via::kDirect : Via::kHot>(s, t);
  uint64_t written = s->last_ticks;
  signal_fence();
  guard_release(s);
  return written;
}

}  // namespace callmon::rt
