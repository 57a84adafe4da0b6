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

// The entry's common step: pushes the frame of `fn` and writes its ENTER at `t`; kFiltered:
// under a record-time filter (filter_fast_entry, hooks.hpp), whose `decision` (1 or 0) the
// frame is marked with and which a frame kept out gets no record by.
template <SlowPath kSlow, bool kFiltered>
__attribute__((always_inline)) inline void cyg_enter_frame(ThreadState* s, uint64_t t,
                                                           uintptr_t fn, uintptr_t sp,
                                                           int decision = 1) {
  guard_acquire(s);
  signal_fence();
  Frame* f = push_frame(s, fn, sp, 0);  // no return address to put back (pg_restore_returns skips it)
  if constexpr (kFiltered) filter_fast_mark(s, f, decision);
  // The cyg hooks' out-of-line records are plain calls, as enter_slow is (event_writer.hpp).
  if (!kFiltered || decision)
    write_hook_enter<kSlow == SlowPath::kDirect ? Via::kDirect : Via::kHot>(s, t, fn);
  signal_fence();
  guard_release(s);
  entry_done();
}

// Records the entry of `fn` at `t` (the hook's clock read); `sp` is the frame the exit
// matches, `site` the call site; `saved`, for kVectorSafe only: the XRay trampoline's save
// area of the argument registers (xray_enter_slow).
template <SlowPath kSlow>
__attribute__((always_inline)) inline void cyg_enter_at_time(uint64_t t, uintptr_t fn,
                                                             uintptr_t site, uintptr_t sp,
                                                             const uint64_t* saved = nullptr) {
  ThreadState* s = t_state;
  if (__builtin_expect(s == nullptr || s->guard != 0 || s->top == s->stack_limit, 0)) {
    if (int decision = s ? filter_fast_entry(s, fn) : -1; decision >= 0) {
      cyg_enter_frame<kSlow, true>(s, t, fn, sp, decision);
      return;
    }
    if constexpr (kSlow == SlowPath::kDirect)
      enter_slow(s, fn, sp, site, t);
    else if (s == nullptr || (s->guard & ~kCallHotGuards))
      slow_call(&xray_enter_slow, s, fn, sp, t, saved);
    else  // an XRay sled: a call boundary (hooks.hpp, Reach::kCall)
      slow_call_hot(&xray_enter_slow_call, s, fn, sp, t, saved);
    return;
  }
  cyg_enter_frame<kSlow, false>(s, t, fn, sp);
}

// The exits' common step: pops the innermost frame `f` (the returning function's) and writes
// its EXIT at `t`; returns the time the EXIT carries (the fenced clock's burst check starts
// there: cyg_hooks.S), or 0 when the filter's `decision` (filter_fast_exit, hooks.hpp)
// is 0, the frame kept out: then it is counted, with no record. kSlow as for the entry: how
// its out-of-line EXIT is reached.
template <SlowPath kSlow>
__attribute__((always_inline)) inline uint64_t cyg_exit_frame(ThreadState* s, Frame* f,
                                                              uint64_t t, int decision = 1) {
  guard_acquire(s);
  signal_fence();
  pop_frame(s, f);
  uint64_t written = 0;
  if (decision) {
    write_exit<kSlow == SlowPath::kDirect ? Via::kDirect : Via::kHot>(s, t);
    written = s->last_ticks;
  } else {
    s->hidden_filtered++;
  }
  signal_fence();
  guard_release(s);
  return written;
}

// Under a record-time filter (a guard bit set), the exit of `fn` by the fast path: the
// innermost frame when it is `fn`'s and filter_fast_exit decides it (`*decision`), else
// nullptr (the slow path).
__attribute__((always_inline)) inline Frame* filter_fast_exit_frame(ThreadState* s, uintptr_t fn,
                                                                    int* decision) {
  if (s == nullptr) return nullptr;
  Frame* f = s->top - 1;
  if (f < s->stack_base || f->fn != fn) return nullptr;
  *decision = filter_fast_exit(s, f);
  return *decision >= 0 ? f : nullptr;
}

}  // namespace callmon::rt
