// The C side of the -pg (`mcount`) and -pg -mfentry (`__fentry__`) modes. The trampolines
// in arch/x86_64/pg_entry.S save the argument registers and call callmon_pg_enter with the
// instrumented function's call site and the stack slot holding the address it will return
// to; the call is recorded like an -finstrument-functions enter, the real return address
// is kept in the shadow-stack frame and the slot gets the address of callmon_pg_return
// (arch/x86_64/pg_return.S). When the function returns there, callmon_pg_exit records the
// exit, pops the frame and hands the real return address back.
//
// The fast paths below (pg_enter, callmon_pg_exit) are integer code that never calls out
// but through slow_call (core/slow_call.hpp): the trampolines keep the AVX/AVX-512 state
// only around the slow paths (docs/patching.md, "Vector registers"), and
// tests/audit/fast_path_audit.py checks the built library for any other call or jump.
//
// Frames are identified by their slot (Frame::sp = slot - 16, see thread_state.hpp): a
// function reached by a tail call finds its slot already redirected and shares it with the
// caller that jumped to it; both end at the one return.
//
// Functions entered through a stub instead (nop sleds and -pg -mfentry calls patched at
// start-up, sled_call_stub.hpp) take the same entry and exit; only the slot holds the stub's
// return point rather than the exit trampoline while the function runs, because the stub
// called the function itself (callmon_sled_enter_c).
#include <cstdint>

#include "runtime/recording/arg_capture.hpp"
#include "runtime/recording/context_stash.hpp"
#include "runtime/calibration/calibration.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/core/slow_call.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/patching/entry_v8.hpp"
#include "runtime/patching/attach_inherit.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/entry_tramp.hpp"
#include "runtime/patching/sled_call_stub.hpp"

using namespace callmon::rt;
using callmon::format::UnwindReason;

extern "C" {
// The exit trampoline (pg_return.S).
void callmon_pg_return();
void callmon_patched_return();  // patch_entry.S
// Set at start-up when nothing is recorded: the entry trampolines jump straight to glibc's
// own mcount / __fentry__, so a -pg program linked with the runtime still writes a complete
// gmon.out. Read by the trampolines only.
uintptr_t callmon_pg_forward_mcount = 0;
uintptr_t callmon_pg_forward_fentry = 0;
}

namespace {

// The exit trampoline new frames get: callmon_pg_return, or, once entry patching patched a
// function, callmon_patched_return (patch_entry.S), which keeps every call-clobbered
// register: code built with no instrumentation flag may rely on a callee's actual register
// use (gcc's -fipa-ra), which the hooks' C code does not respect. Either is recognised.
void (*g_return_trampoline)() = &callmon_pg_return;

inline uintptr_t return_trampoline() { return reinterpret_cast<uintptr_t>(g_return_trampoline); }
// A slot holding one of them, or a sled stub's return point (sled_call_stub.hpp), belongs to
// a frame on the shadow stack.
inline bool is_return_trampoline(uintptr_t a) {
  return a == reinterpret_cast<uintptr_t>(&callmon_pg_return) ||
         a == reinterpret_cast<uintptr_t>(&callmon_patched_return) || sled_stub_return(a);
}

inline uintptr_t slot_sp(uintptr_t* slot) { return reinterpret_cast<uintptr_t>(slot) - 16; }
inline uintptr_t* sp_slot(uintptr_t sp) { return reinterpret_cast<uintptr_t*>(sp + 16); }

// The address recorded for the function: its call of mcount/__fentry__. `child` is where
// that call returns to; the call is `call rel32` (e8, 5 bytes) or, in position-independent
// code built by GCC, `call *sym@GOTPCREL(%rip)` (ff 15, 6 bytes). With -mfentry that is the
// function's first instruction (after an endbr64, if any); with mcount it is inside the
// prologue. Either way the symbolizer maps it to its function.
inline uintptr_t call_site(uintptr_t child) {
  return child - (*reinterpret_cast<const uint8_t*>(child - 5) == 0xe8 ? 5 : 6);
}

[[noreturn]] void lost_return(const char* what) {
  diag(what);
  __builtin_trap();
}

// The innermost frame whose slot is `sp`'s, or nullptr.
Frame* find_slot_frame(ThreadState* s, uintptr_t sp) {
  for (Frame* f = s->top; f-- > s->stack_base;)
    if (f->sp == sp) return f;
  return nullptr;
}

// A --patch'ed function that returned from another place than its slot: hand-written code
// that builds a frame of its own and returns from it (libffi's ffi_call_unix64, every call
// of Python's ctypes, copies its return address there first). Its copy was called by its
// trampoline, so the word its `ret` popped, `slot` now, still holds that trampoline's
// return point, which names the function (entry_tramp_function). When the innermost open
// frame is that function's and `slot` lies below the slot of the frame under it (the
// caller's frame holds the moved one), that frame is the one ending; else nullptr.
Frame* moved_return_frame(ThreadState* s, uintptr_t* slot) {
  if (s->top == s->stack_base) return nullptr;
  Frame* f = s->top - 1;
  if (!f->sp || f->fn != entry_tramp_function(*slot)) return nullptr;
  const Frame* outer = f;
  while (outer > s->stack_base && outer->sp == f->sp) --outer;  // tail calls share its slot
  if (outer->sp != f->sp && outer->sp <= slot_sp(slot)) return nullptr;
  return f;
}

// kHot and kCall: reached through slow_call_hot, so nothing out of the library but, for
// kCall, a monitor's callbacks (hooks.hpp, Reach and hot_reach_ok); anything else is handed
// to the kFull instance through slow_call.
// `t`: the entry's clock read (slow_entry_ticks, hooks.hpp).
template <Reach kReach>
void pg_enter_slow(ThreadState* s, uintptr_t fn, uintptr_t* slot, const uint64_t* saved,
                   uint64_t t) {
  constexpr bool kFull = kReach == Reach::kFull;
  // Whether this instance may run a monitor's callbacks (not kHot: a --patch'ed entry's).
  constexpr bool kMonitorOk = kReach != Reach::kHot;
  if constexpr (!kFull) {
    if (!hot_reach_ok<kReach>(s)) {
      slow_call(&pg_enter_slow<Reach::kFull>, s, fn, slot, saved, t);
      return;
    }
  }
  // Called for the runtime (runtime_scope.hpp): no frame, the return address left alone.
  if (in_runtime()) return;
  [[maybe_unused]] SlowErrno<kReach> es;
  bool stale = false;  // the slow path's own work since `t` (slow_entry_ticks)
  if constexpr (kFull) {
    if (!s) {
      g_pg_hooks = true;  // the process set-up calibrates these hooks, not the cyg ones
      if (!(s = thread_setup())) return;
      stale = true;  // before the set-up the clock may not even have been chosen
    }
  }
  bool monitored = false;
  if constexpr (kMonitorOk) {
    monitored = (s->guard & kGuardMonitor) != 0;
    if (monitored && ((s->guard & kGuardBusyMask) || s->top == s->stack_limit)) {
      // A call from a monitor callback is not reported (nor redirected); neither is one
      // the shadow stack has no room for.
      return;
    }
  }
  if constexpr (kFull) {
    if (!revive_if_stopped(s, &stale)) return;
  }
  if (s->top == s->stack_limit) {
    // Without a frame there would be no way back from the trampoline: the call is neither
    // redirected nor recorded, only counted.
    __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
    return;
  }
  uintptr_t sp = slot_sp(slot);
  uintptr_t ret = *slot;
  bool shared = is_return_trampoline(ret);
  if (shared) {
    // A tail call: the function that jumped here already redirected this slot.
    Frame* owner = find_slot_frame(s, sp);
    if (!owner) {
      __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
      return;
    }
    ret = owner->ret;
  } else if (kFull && (s->guard & kGuardUnwinding)) {
    // A call from a landing pad (a destructor) while an exception is unwound. Its slot
    // held its own return address, so a frame still on the shadow stack with the same
    // slot is gone, and so is every frame pushed after it: left open, the exit would take
    // that frame for a tail call's sharing the slot and return to its caller. The landing
    // pad (_Unwind_SetIP) has normally closed them already; this covers a personality
    // routine whose _Unwind_SetIP call does not go through the dynamic linker (a copy of
    // libgcc_eh linked into its module, -Bsymbolic). Only an exact match is trusted: on
    // an alternate signal stack the addresses are not ordered.
    Frame* f = s->top;
    while (f > s->stack_base && f[-1].sp < sp) --f;
    if constexpr (kFull)
      if (f > s->stack_base && f[-1].sp == sp) {
        unwind_below(sp + 1, UnwindReason::kException);
        stale = true;
      }
  }
  bool nested = guard_enter(s);
  if constexpr (kFull) stale |= handle_rescan(s, nested);
  t = slow_entry_ticks(t, stale);
  Frame* f = push_frame(s, fn, sp, ret);
  note_selection(s, f, nested);
  signal_fence();
  if (!shared) *slot = return_trampoline();
  if constexpr (kMonitorOk) {
    if (monitored) {
      monitor_entered(s, f, ret, t);
      guard_leave(s);
      entry_done();
      return;
    }
  }
  if (frame_recorded(s, f)) {
    put_enter_kept(s, nested, t, fn, f);
    if (const callmon::select::SpecEntry* spec = function_spec(fn))
      note_args(s, nested, t, f, *spec, saved, slot);
  }
  guard_leave(s);
  entry_done();
}

// A return through the trampoline that is not the plain case: nested in another hook,
// recording stopped, frames left above this one (a non-local exit we did not see, or the
// frames of an exception still being unwound), or a slot shared by a tail call.
// kHot, kCall: as pg_enter_slow's.
template <Reach kReach>
uintptr_t pg_exit_slow(ThreadState* s, uintptr_t* slot, uint64_t t, const uint64_t* saved) {
  constexpr bool kFull = kReach == Reach::kFull;
  if constexpr (!kFull) {
    if (!hot_reach_ok<kReach>(s)) return slow_call(&pg_exit_slow<Reach::kFull>, s, slot, t, saved);
  } else {
    // A frame open at the attach returning before the thread's first hook: its frames
    // first.
    s = attach_inherit_claim(s);
  }
  uintptr_t sp = slot_sp(slot);
  Frame* match = s ? find_slot_frame(s, sp) : nullptr;
  if constexpr (!kFull) {
    if (!match) return slow_call(&pg_exit_slow<Reach::kFull>, s, slot, t, saved);
  }
  if (!match && s) {
    // A suspended context resumed without the runtime seeing it (context_stash.hpp).
    bool nested = guard_enter(s);
    if (context_adopt(s, 0, sp, nested)) match = find_slot_frame(s, sp);
    guard_leave(s);
  }
  if (!match && s && (match = moved_return_frame(s, slot))) sp = match->sp;
  if (!match) {
    // Its thread could not take it (no file): the address the attach kept.
    if (uintptr_t kept = attach_inherit_return(sp)) {
      *slot = kept;
      return kept;
    }
    lost_return(s ? "a hijacked return address is missing from the shadow stack"
                  : "a hijacked return found no thread state; cannot continue");
  }
  [[maybe_unused]] SlowErrno<kReach> es;
  Frame* low = match;
  while (low > s->stack_base && low[-1].sp == sp) --low;
  // A frame open at an attach keeps no return address (attach_inherit.hpp): when a call
  // it tail-called returns through its slot, both end, and the real address is the one
  // the tail call's entry kept.
  const Frame* real = low;
  while (real < match && !real->ret) ++real;
  uintptr_t ret = real->ret;
  *slot = ret;  // first: from here on an unwinder sees the real caller
  uint32_t g = s->guard;
  bool nested = guard_enter(s);
  if constexpr (kReach != Reach::kHot) {  // kHot: hot_reach_ok let no monitored thread in
    if ((g & kGuardMonitor) && !nested) {
      monitor_end_frames(s, match + 1, t,
                         (g & kGuardUnwinding) ? kExitException : kExitUnknown);
      monitor_end_frames(s, low, t, kExitNormal);  // several when tail calls share the slot
      guard_leave(s);
      return ret;
    }
  }
  uint64_t skipped = frames_recorded(s, match + 1, s->top);
  uint64_t ended = frames_recorded(s, low, match + 1);
  pop_frames(s, low);
  if (g & (kGuardStopped | kGuardMonitor)) {
    if (s->header) __atomic_fetch_add(&s->header->lost_events, skipped + ended, __ATOMIC_RELAXED);
  } else {
    // The frames popped whose records are still owed (ThreadState::pending_exits): a jump
    // out of a handler that ran at the end of the rescan or of one of these records' chunk
    // switches closes them.
    uint64_t owed = skipped + ended;
    if (!nested) s->pending_exits = static_cast<uint32_t>(owed);
    if constexpr (kFull) handle_rescan(s, nested);
    if (skipped)
      put_unwind(s, nested, t, skipped,
                 (g & kGuardUnwinding) ? callmon::format::UnwindReason::kException
                                       : callmon::format::UnwindReason::kUnknown);
    owed -= skipped;
    // Innermost first: taking back a tail-called frame's ENTER may make its caller's
    // the last record again.
    for (Frame* e = match + 1; e-- > low;) {
      if (!nested) s->pending_exits = static_cast<uint32_t>(owed);
      if (!frame_recorded(s, e)) {
        note_filtered(s, nested, t);
        continue;
      }
      --owed;
      if (skipped || !take_back_short(s, nested, e, t)) {
        put_exit(s, nested, t);
        if (!nested) s->pending_exits = static_cast<uint32_t>(owed);
        put_retval_if_wanted(s, nested, t, e, saved);  // a tail call's frames: the one value
      }
    }
    if (!nested) s->pending_exits = 0;
  }
  guard_leave(s);
  return ret;
}

// The fast paths below take a probe's hot reach as a template argument: Reach::kCall for
// the probes the compiler placed (mcount, __fentry__ and the sleds patched to it, a
// library call's probe, and the exit of their frames through callmon_pg_return), where a
// monitored thread's calls take slow_call_hot too; Reach::kHot for a --patch'ed function's
// entry and its exit through callmon_patched_return, where the program may keep values in
// any register and a monitor's callbacks need the full save (hooks.hpp, Reach).

// The entry's common step: pushes the frame of `fn`, redirects its return and writes its
// ENTER at `t`; kFiltered: under a record-time filter (filter_fast_entry, hooks.hpp), whose
// `decision` (1 or 0) the frame is marked with and which a frame kept out gets no record by.
template <Reach kHotReach, bool kFiltered>
__attribute__((always_inline)) inline void pg_enter_frame(ThreadState* s, uint64_t t,
                                                          uintptr_t fn, uintptr_t* slot,
                                                          const uint64_t* saved,
                                                          int decision = 1) {
  uintptr_t ret = *slot;
  const bool shared = is_return_trampoline(ret);
  if (__builtin_expect(shared, 0)) {  // a tail call
    // The function that jumped here redirected this slot: its frame, the innermost, keeps
    // the real return address, which the new frame shares (pg_exit_shared ends both).
    // Anything else (a frame further down, none) is the slow path's.
    const Frame* owner = s->top - 1;
    if (kFiltered || owner < s->stack_base || owner->sp != slot_sp(slot) || !owner->ret) {
      slow_call_hot(&pg_enter_slow<kHotReach>, s, fn, slot, saved, t);
      return;
    }
    ret = owner->ret;
  }
  guard_acquire(s);
  signal_fence();
  Frame* f = push_frame(s, fn, slot_sp(slot), ret);
  signal_fence();  // the frame is complete before the return can reach the trampoline
  if (!shared) *slot = return_trampoline();  // else the tail caller's redirection stays
  if constexpr (kFiltered) filter_fast_mark(s, f, decision);
  if (!kFiltered || decision) write_hook_enter(s, t, fn);
  signal_fence();
  guard_release(s);
  entry_done();
}

// The entry's fast path with the clock read at `t`.
template <Reach kHotReach>
__attribute__((always_inline)) inline void pg_enter_at_time(uint64_t t, uintptr_t fn,
                                                            uintptr_t* slot,
                                                            const uint64_t* saved) {
  ThreadState* s = t_state;
  if (__builtin_expect(s == nullptr, 0)) {  // the thread's set-up: files, memory, libc
    slow_call(&pg_enter_slow<Reach::kFull>, s, fn, slot, saved, t);
    return;
  }
  if (__builtin_expect(s->guard != 0 || s->top == s->stack_limit, 0)) {
    if (int decision = filter_fast_entry(s, fn); decision >= 0)
      pg_enter_frame<kHotReach, true>(s, t, fn, slot, saved, decision);
    else if (s->guard & ~kReachGuards<kHotReach>)
      slow_call(&pg_enter_slow<Reach::kFull>, s, fn, slot, saved, t);
    else
      slow_call_hot(&pg_enter_slow<kHotReach>, s, fn, slot, saved, t);
    return;
  }
  pg_enter_frame<kHotReach, false>(s, t, fn, slot, saved);
}

// The entry on the monotonic clock, whose read is the vDSO's clock_gettime.
template <Reach kHotReach>
void pg_enter_monotonic(uintptr_t fn, uintptr_t* slot, const uint64_t* saved) {
  pg_enter_at_time<kHotReach>(read_ticks(), fn, slot, saved);
}

template <Reach kHotReach>
__attribute__((always_inline)) inline void pg_enter(uintptr_t fn, uintptr_t* slot, const uint64_t* saved) {
  if (__builtin_expect(!g_clock_tsc, 0)) {
    slow_call_hot(&pg_enter_monotonic<kHotReach>, fn, slot, saved);
    return;
  }
  pg_enter_at_time<kHotReach>(__rdtsc(), fn, slot, saved);
}

// The exit's common step: pops the innermost frame `f`, whose return slot is `slot`, and
// writes its EXIT at `t`, unless a record-time filter's `decision` (filter_fast_exit,
// hooks.hpp) is 0, the frame kept out: then it is only counted. Returns the real return
// address.
__attribute__((always_inline)) inline uintptr_t pg_exit_frame(ThreadState* s, Frame* f,
                                                              uintptr_t* slot, uint64_t t,
                                                              int decision = 1) {
  uintptr_t ret = f->ret;
  *slot = ret;
  guard_acquire(s);
  signal_fence();
  pop_frame(s, f);
  if (decision) write_hook_exit(s, t);
  else s->hidden_filtered++;
  signal_fence();
  guard_release(s);
  return ret;
}

// The exit of the frames a tail call shares (the innermost `f` and those below it with the
// same slot, pushed by pg_enter_frame's tail case): each popped and ended at `t`, innermost
// first, as pg_exit_frame ends one; the slow path writes the same records. No filter is
// on (the guard is clear), so every one of them has its ENTER.
__attribute__((always_inline)) inline uintptr_t pg_exit_shared(ThreadState* s, Frame* f,
                                                               uintptr_t* slot, uint64_t t) {
  const uintptr_t ret = f->ret;
  const uintptr_t sp = f->sp;
  *slot = ret;
  guard_acquire(s);
  signal_fence();
  do {
    pop_frame(s, f);
    write_hook_exit(s, t);
    signal_fence();
  } while (f-- > s->stack_base && f->sp == sp);
  guard_release(s);
  return ret;
}

// The exit's fast path with its clock read at `t`.
template <Reach kHotReach>
__attribute__((always_inline)) inline uintptr_t pg_exit_at_time(uint64_t t, uintptr_t* slot,
                                                                const uint64_t* saved) {
  ThreadState* s = t_state;
  if (__builtin_expect(s != nullptr, 1)) {
    uintptr_t sp = slot_sp(slot);
    Frame* f = s->top - 1;
    if (__builtin_expect(f >= s->stack_base && f->sp == sp, 1)) {
      if (__builtin_expect(f == s->stack_base || f[-1].sp != sp, 1)) {
        if (__builtin_expect(s->guard == 0, 1)) return pg_exit_frame(s, f, slot, t);
        if (int decision = filter_fast_exit(s, f); decision >= 0)
          return pg_exit_frame(s, f, slot, t, decision);
      } else if (s->guard == 0 && f->ret) {
        return pg_exit_shared(s, f, slot, t);  // a tail call's frames
      }
    }
  }
  // No thread state yet (a frame open at an attach returning first) may set the thread up.
  if (__builtin_expect(s == nullptr || (s->guard & ~kReachGuards<kHotReach>), 0))
    return slow_call(&pg_exit_slow<Reach::kFull>, s, slot, t, saved);
  return slow_call_hot(&pg_exit_slow<kHotReach>, s, slot, t, saved);
}

template <Reach kHotReach>
uintptr_t pg_exit_monotonic(uintptr_t* slot, const uint64_t* saved) {
  return pg_exit_at_time<kHotReach>(read_ticks(), slot, saved);
}

template <Reach kHotReach>
inline uintptr_t pg_exit(uintptr_t* slot, const uint64_t* saved) {
  if (__builtin_expect(!g_clock_tsc, 0))
    return slow_call_hot(&pg_exit_monotonic<kHotReach>, slot, saved);
  if (__builtin_expect(g_clock_fenced, 0)) _mm_lfence();  // exit_ticks(), rdtsc only
  return pg_exit_at_time<kHotReach>(__rdtsc(), slot, saved);
}

}  // namespace

// Called by the mcount trampoline with all argument registers saved at `saved`; `slot` is
// 8(%rbp) of the instrumented function, `above` the word just above the trampoline's
// return address.
//
// gcc 12 -pg -fsplit-stack at -O2 calls mcount only on the path that went through
// __morestack, before the function has pushed %rbp: `call __morestack; ret; call mcount;
// jmp body`. __morestack called the function again (at the call after that `ret`) on the
// new stack segment, so %rbp is still the caller's and 8(%rbp) the caller's slot; the
// function's own return (into __morestack) is just above the trampoline's return address.
// Recognised by the `ret` (c3) just before the call, the `call rel32` (e8) before it and
// the `jmp` (eb or e9) after it: in every other shape the bytes before the call are the
// prologue (`mov %rsp,%rbp` ends in e5, a push in 5x, `sub $n,%rsp` in an immediate that
// is a multiple of 8) and the function's body follows. The byte 5 before the `ret` is
// read only once the `ret` is seen, when it is part of the same function.
extern "C" __attribute__((no_instrument_function)) void callmon_pg_enter(
    uintptr_t child, uintptr_t* slot, const uint64_t* saved, uintptr_t* above) {
  uintptr_t site = call_site(child);
  const auto* before = reinterpret_cast<const uint8_t*>(site);
  const auto* code = reinterpret_cast<const uint8_t*>(child);
  if (before[-1] == 0xc3 && (code[0] == 0xeb || code[0] == 0xe9) && before[-6] == 0xe8)
    slot = above;
  pg_enter<Reach::kCall>(site, slot, saved);
}

// Called by the __fentry__ trampoline, which passes the word just above its return
// address as the slot. That is the function's return address when `call __fentry__` is
// its first instruction (after an endbr64), the shape clang always emits and GCC for every
// function but one: a function taking a static chain in r10 (a GCC nested function) is
// entered through `push %r10; call __fentry__; pop %r10` (41 52, the call, 41 5a), so the
// word above is the saved r10 and the return address is one word further up. Hijacking the
// saved r10 instead would hand the function a return address for its static chain. Both
// byte pairs are checked: the two bytes before a first-instruction call belong to the
// previous function or its padding, and no function starts with `pop %r10` after its entry
// hook. Reading them is safe: the two bytes after the call are the function's own, and
// the two before it are read only when the pop follows, so the push is the function's too.
// Every other prologue gcc and clang emit before __fentry__ and mcount leaves the slot
// where the trampolines look (docs/runtime.md, "Prologue shapes").
extern "C" __attribute__((no_instrument_function)) void callmon_pg_enter_fentry(
    uintptr_t child, uintptr_t* slot, const uint64_t* saved, uintptr_t*) {
  uintptr_t site = call_site(child);
  const auto* code = reinterpret_cast<const uint8_t*>(child);
  const auto* before = reinterpret_cast<const uint8_t*>(site);
  if (code[0] == 0x41 && code[1] == 0x5a && before[-2] == 0x41 && before[-1] == 0x52) ++slot;
  pg_enter<Reach::kCall>(site, slot, saved);
}

// Called by a function's stub (a nop sled's or a -pg -mfentry call's, sled_call_stub.hpp)
// through callmon_sled_enter (arch/x86_64/sled_call.S) with the function's address: its
// entry as __fentry__'s. Returns 1 when the slot now belongs to a new
// frame (the stub then calls the function and its return comes back through
// callmon_sled_return), 0 when it is left to the function (nothing recorded, or a tail call
// sharing the slot of its caller's frame: the stub jumps to the function).
extern "C" __attribute__((no_instrument_function)) uintptr_t callmon_sled_enter_c(
    uintptr_t fn, uintptr_t* slot, const uint64_t* saved) {
  uintptr_t before = *slot;
  pg_enter<Reach::kCall>(fn, slot, saved);
  return *slot != before;
}

// Called by callmon_pg_return with the return values saved at `saved`; `slot` is where the
// returning function's return address was. Puts the real one back there and returns it.
// Frames get callmon_pg_return until entry patching patched a function (pg_full_save_returns):
// the returns of the compiler's probes' frames, a call boundary (Reach::kCall).
extern "C" __attribute__((no_instrument_function)) uintptr_t callmon_pg_exit(
    uintptr_t* slot, const uint64_t* saved) {
  return pg_exit<Reach::kCall>(slot, saved);
}

// The same called by callmon_patched_return (patch_entry.S): the return of any frame once
// entry patching is on, a --patch'ed function's among them, whose caller may keep values
// in any register across it (Reach::kHot: a monitor's callbacks behind the full save).
extern "C" __attribute__((no_instrument_function)) uintptr_t callmon_patched_exit(
    uintptr_t* slot, const uint64_t* saved) {
  return pg_exit<Reach::kHot>(slot, saved);
}

namespace callmon::rt {

bool g_pg_hooks = false;

// The library-call probes (libcall_hooks.cpp) enter like a -pg -mfentry function.
// A library call is an ordinary call through the PLT: a call boundary (Reach::kCall).
void pg_enter_at(uintptr_t fn, uintptr_t* slot, const uint64_t* saved) {
  pg_enter<Reach::kCall>(fn, slot, saved);
}
void pg_full_save_returns() { g_return_trampoline = &callmon_patched_return; }

// Oldest first, so that where an abandoned frame and a live one name the same slot, the
// live (newer) frame's address is the one left there. Only slots that still hold the
// trampoline are touched: a frame's stack may have been reused since. A half-pushed frame
// (sp 0: an asynchronous cancellation's unwind interrupted the entry hook) has not
// redirected its slot yet.
//
// Both walk the shadow stack with the guard raised, as a hook does: an attach's detach
// waits while a thread's guard is up (attach_threads_busy), then puts every slot back and
// empties the stack. Stopped in the middle of a hijack (a catch, under the unwinder's
// interposers), the thread went on redirecting the slots the detach had put back, from a
// stack top it had read before, and its next throw met the exit trampoline in the
// unwinder's walk: std::terminate (attach.throwing.*).
void pg_restore_returns() {
  ThreadState* s = attach_inherit_claim(t_state);  // frames open at an attach, hijacked
  if (!s) return;
  guard_enter(s);
  for (Frame* f = s->stack_base; f < s->top; ++f) {
    if (!f->ret || !f->sp) continue;
    uintptr_t* slot = sp_slot(f->sp);
    if (is_return_trampoline(*slot)) *slot = f->ret;
  }
  guard_leave(s);
}

void pg_hijack_returns() {
  ThreadState* s = t_state;
  if (!s) return;
  uintptr_t tramp = return_trampoline();
  guard_enter(s);
  for (Frame* f = s->stack_base; f < s->top; ++f) {
    if (!f->ret || !f->sp) continue;
    uintptr_t* slot = sp_slot(f->sp);
    if (*slot == f->ret) *slot = tramp;
  }
  guard_leave(s);
}

}  // namespace callmon::rt

// Called by the entry-patching trampoline (arch/x86_64/patch_entry.S) with the patched
// function's own address: the stack is the -mfentry one, so the entry and its exit are
// the -pg modes' (docs/patching.md, "Entry patching").
//
// A branch of the function back to its own first instruction (a loop gcc made of a
// self tail call, in a function with no prologue) comes through the trampoline again with
// the same slot, already redirected, and the function's frame on top: the -finstrument-functions
// build calls its hook once before that loop, so this is no new call.
//
// Returns 1 when the slot now belongs to a new frame: the trampoline then calls the
// function's copy, whose return comes back through callmon_patched_return_ret
// (entry_tramp.hpp). 0 leaves the function to run on from the trampoline: nothing recorded,
// or a tail call or that loop sharing the slot. (The trampolines an attach makes always
// run on: there frames return through the redirected return, which the detach knows.)
extern "C" __attribute__((no_instrument_function)) uintptr_t callmon_patched_enter(
    uintptr_t fn, uintptr_t* slot, const uint64_t* saved) {
  ThreadState* s = t_state;
  uintptr_t before = *slot;
  // Called from V8's generated code, which reads this return address (entry_v8.hpp): left
  // alone, unrecorded.
  if (v8_foreign_return(before)) return 0;
  if (s && s->top > s->stack_base && is_return_trampoline(before)) {
    const Frame* f = s->top - 1;
    if (f->fn == fn && f->sp == slot_sp(slot)) return 0;
  }
  pg_enter<Reach::kHot>(fn, slot, saved);  // any function's start: not a call boundary
  return *slot != before;
}
