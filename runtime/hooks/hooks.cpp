// Slow paths of the hooks: set-up, nesting, unwinding and mismatched returns.
#include "runtime/hooks/hooks.hpp"

#include "runtime/recording/arg_capture.hpp"
#include "runtime/recording/context_stash.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/selection/filter_select.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/patching/sled_patch.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/attach_inherit.hpp"

namespace callmon::rt {

using format::SpecialCode;
using format::UnwindReason;

void put_hidden(ThreadState* s, bool nested, uint64_t t) {
  if (nested || !hidden_pending(s)) return;
  uint64_t f[3] = {s->hidden_filtered, s->hidden_taken, s->hidden_capture};
  s->hidden_filtered = s->hidden_taken = s->hidden_capture = 0;
  write_special(s, false, format::kCodeHidden, t, f, 3);
}

void flush_hidden(ThreadState* s, uint64_t t) {
  if (s->records) {
    for (Frame* f = s->top; f-- > s->stack_base;) {
      if (!frame_recorded(s, f)) continue;
      const FrameRecord* r = &s->records[f - s->stack_base];
      if (r->after == s->cur && t >= r->enter_ticks && t - r->enter_ticks < s->min_ticks) return;
      break;
    }
  }
  put_hidden(s, false, t);
}

void put_enter(ThreadState* s, bool nested, uint64_t t, uintptr_t fn) {
  if (nested) {
    put_hidden(s, nested, t);
    uint64_t a = fn;
    write_special(s, true, format::kCodeEnter, t, &a, 1);
    return;
  }
  // The frame is pushed: a jump out of a handler that ran in the HIDDEN's chunk switch
  // must not count it (ThreadState::pending_enter).
  s->pending_enter = 1;
  signal_fence();
  put_hidden(s, nested, t);
  write_enter(s, t, fn);
  signal_fence();
  s->pending_enter = 0;
}

void put_exit(ThreadState* s, bool nested, uint64_t t) {
  if (nested) {
    put_hidden(s, nested, t);
    write_special(s, true, format::kCodeExit, t, nullptr, 0);
    return;
  }
  // The frame is popped (ThreadState::pending_exits); a caller that popped several has
  // set their count.
  bool own = s->pending_exits == 0;
  if (own) s->pending_exits = 1;
  signal_fence();
  put_hidden(s, nested, t);
  write_exit(s, t);
  signal_fence();
  if (own) s->pending_exits = 0;
}

void put_unwind(ThreadState* s, bool nested, uint64_t t, uint64_t count, UnwindReason r) {
  put_hidden(s, nested, t);
  uint64_t f[2] = {count, static_cast<uint64_t>(r)};
  write_special(s, nested, format::kCodeUnwind, t, f, 2);
}

void put_enter_kept(ThreadState* s, bool nested, uint64_t t, uintptr_t fn, Frame* f) {
  if (!s->records || nested) {
    put_enter(s, nested, t, fn);
    return;
  }
  FrameRecord* r = &s->records[f - s->stack_base];
  r->after = nullptr;
  uint64_t prev_ticks = s->last_ticks;
  uintptr_t prev_addr = s->last_addr;
  uint64_t chunk = s->chunk_index;
  uint8_t* start = s->cur;
  // The HIDDEN record of what the caller did unseen goes first, and with the ENTER: taken
  // back together, its counts are pending again, still the caller's (a HIDDEN left in
  // place would keep the caller from being taken back in turn).
  const uint64_t hidden[3] = {s->hidden_filtered, s->hidden_taken, s->hidden_capture};
  // The records' lengths as write_special and write_enter encode them: a different
  // distance afterwards means a signal's records (or a chunk switch) came between, and
  // the ENTER is not taken back.
  uint64_t tt = t < prev_ticks ? prev_ticks : t;
  unsigned hidden_size = 0;
  if (hidden[0] | hidden[1] | hidden[2]) {
    hidden_size = format::leb128_size(format::special_head(format::kCodeHidden, false)) +
                  format::leb128_size(tt - prev_ticks) + format::leb128_size(hidden[0]) +
                  format::leb128_size(hidden[1]) + format::leb128_size(hidden[2]);
    put_hidden(s, false, t);
  }
  uint64_t dt = hidden_size ? 0 : tt - prev_ticks;  // a HIDDEN moved the time base to tt
  unsigned size = enter_record_size(s, fn, dt);
  const uint64_t prev_next = s->tables.next[format::addr_slot(prev_addr)];
  const uint64_t prev_cached = s->tables.cache[format::addr_slot(fn)];
  write_enter(s, t, fn);
  if (s->chunk_index != chunk || s->cur != start + hidden_size + size) return;
  r->before = start;
  r->chunk = chunk;
  r->enter_ticks = t;
  r->prev_ticks = prev_ticks;
  r->prev_addr = prev_addr;
  r->prev_next = prev_next;
  r->prev_cached = prev_cached;
  for (int i = 0; i < 3; ++i) r->hidden[i] = hidden_size ? hidden[i] : 0;
  signal_fence();
  r->after = s->cur;
}

bool take_back_short(ThreadState* s, bool nested, Frame* f, uint64_t t) {
  if (!s->records || nested) return false;
  FrameRecord* r = &s->records[f - s->stack_base];
  uint8_t* after = r->after;
  if (!after || t < r->enter_ticks || t - r->enter_ticks >= s->min_ticks ||
      s->cur != after || s->chunk_index != r->chunk)
    return false;
  r->after = nullptr;
  // PAD first: whatever happens next, the bytes stay readable. Then the cursor goes back
  // with one non-locked cmpxchg (atomic against this thread's signal handlers); if a
  // handler's records got in after our check, the ENTER simply stays PAD.
  memset(r->before, format::kPadByte, static_cast<size_t>(after - r->before));
  signal_fence();
  uint8_t* expected = after;
  asm volatile("cmpxchgq %2, %1" : "+a"(expected), "+m"(s->cur) : "r"(r->before) : "memory", "cc");
  s->last_ticks = r->prev_ticks;
  // The address tables as before the ENTER (the records after it, if any, were taken back
  // already and put theirs back).
  s->tables.cache[format::addr_slot(s->last_addr)] = r->prev_cached;
  s->tables.next[format::addr_slot(r->prev_addr)] = r->prev_next;
  s->last_addr = r->prev_addr;
  s->hidden_filtered += r->hidden[0];
  s->hidden_taken += r->hidden[1] + 1;
  s->hidden_capture += r->hidden[2];
  flush_hidden_if_many(s, t);
  return true;
}

void note_args(ThreadState* s, bool nested, uint64_t t, Frame* f, const select::SpecEntry& spec,
               const uint64_t* saved, const uintptr_t* ret_slot) {
  if (spec.ret_format && s->selected) s->selected[f - s->stack_base] |= kSelectedRetval;
  if (spec.nargs == 0) return;
  uint8_t* before = s->cur;
  uint64_t chunk = s->chunk_index;
  uint64_t from = read_ticks();
  put_args(s, nested, t, spec, saved, ret_slot);
  note_capture(s, nested, from);
  if (s->records && !nested) {
    // A candidate for take_back_short only while ENTER and ARGS are the last records.
    FrameRecord* r = &s->records[f - s->stack_base];
    if (r->after == before && s->chunk_index == chunk) {
      signal_fence();
      r->after = s->cur;
    } else {
      r->after = nullptr;
    }
  }
}

namespace {

// The recorder's own work from `from` to `to`, outside a probe's measured part: a PAUSE, so
// compensation takes it from the calls open (docs/format.md). Depth 0 only: nested PAUSE
// records are never written.
void put_pause(ThreadState* s, uint64_t from, uint64_t to) {
  if (!s->header || to <= from) return;
  uint64_t ticks = to - from;
  write_special(s, false, format::kCodePause, to, &ticks, 1);
}

// The frame an exit of `fn` at frame address `sp` returns from: the innermost frame of
// `fn` that is not deeper than `sp` (deeper ones were abandoned: their sp is smaller),
// else the innermost frame of `fn` at all.
Frame* find_exit_frame(ThreadState* s, uintptr_t fn, uintptr_t sp) {
  Frame* any = nullptr;
  for (Frame* f = s->top; f-- > s->stack_base;) {
    if (f->fn != fn) continue;
    if (f->sp >= sp) return f;
    if (!any) any = f;
  }
  return any;
}

}  // namespace

// After a dlopen: the new module's `module` line must be written before its functions'
// addresses are of any use. Not from a nested hook (dl_iterate_phdr takes a lock). The
// rescan is the recorder's time (tens of microseconds, more with sleds to patch), not the
// calls' that are open: a PAUSE, ahead of the record the hook goes on to write.
bool handle_rescan(ThreadState* s, bool nested) {
  if (nested || !(s->guard & kGuardRescan)) return false;
  s->guard &= ~kGuardRescan;
  if (!take_rescan_request()) return false;
  RuntimeScope rs;
  uint64_t from = read_ticks();
  sled_patch_modules();  // the new module's sleds, if dlsym has not patched them yet
  modules_rescan();
  put_pause(s, from, read_ticks());
  return true;
}

bool revive_if_stopped(ThreadState* s, bool* stale) {
  if (!(s->guard & kGuardStopped)) return true;
  if (!attach_revive(s)) {
    if (s->header) __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
    return false;
  }
  *stale = true;
  return true;
}

// -finstrument-functions hooks run after the prologue, with the argument registers gone:
// a function with an argument spec gets its calls recorded without values, and one warning.
void args_unseen() {
  static bool warned = false;
  if (__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED)) return;
  diag("arguments and return values cannot be recorded in code built with "
       "-finstrument-functions; build with -pg -mfentry, nop sleds or XRay (docs/record.md)");
}

template <class Body>
bool with_thread(Body&& body) {
  ThreadState* s = t_state;
  if (!s && !(s = thread_setup())) return false;
  // Stopped: nowhere to write. Monitor mode: nothing is recorded (no thread file at all).
  if (s->guard & (kGuardStopped | kGuardMonitor)) return false;
  ErrnoSaver es;
  bool nested = guard_enter(s);
  body(s, nested);
  guard_leave(s);
  return true;
}

namespace {

// `saved`: the XRay entry trampoline's save area of the argument registers (frame.inc's
// ARGS_STORE), for an argument spec; nullptr from a -finstrument-functions hook, which runs
// after the prologue.
template <Reach kReach>
void enter_slow_as(ThreadState* s, uintptr_t fn, uintptr_t sp, uintptr_t site, uint64_t t,
                   const uint64_t* saved) {
  constexpr bool kFull = kReach == Reach::kFull;
  if constexpr (!kFull) {
    if (!hot_reach_ok<kReach>(s)) {  // kCall: an XRay sled's
      slow_call(&xray_enter_slow, s, fn, sp, t, saved);
      return;
    }
  }
  // A call the program's interposed function makes for the runtime: not the program's.
  if (in_runtime()) return;
  [[maybe_unused]] SlowErrno<kReach> es;
  bool stale = false;
  if constexpr (kFull) {
    if (!s) {
      if (!(s = thread_setup())) return;
      stale = true;  // before the set-up the clock may not even have been chosen
    }
  }
  if constexpr (kReach != Reach::kHot) {  // kHot: hot_reach_ok let no monitored thread in
    if (s->guard & kGuardMonitor) {
      monitor_enter(s, fn, sp, site);
      return;
    }
  }
  if constexpr (kFull) {
    if (!revive_if_stopped(s, &stale)) return;
  }
  bool nested = guard_enter(s);
  if constexpr (kFull) stale |= handle_rescan(s, nested);
  t = slow_entry_ticks(t, stale);
  Frame* f = s->top;
  bool record = true;
  if (f == s->stack_limit) {
    // Out of shadow stack: the call is still recorded; its frame is only counted.
    s->overflow_depth++;
    s->guard |= kGuardOverflow;
    record = s->record_depth == 0;
  } else {
    push_frame(s, fn, sp, 0);
    note_selection(s, f, nested);
    record = frame_recorded(s, f);
    if (record) {
      put_enter_kept(s, nested, t, fn, f);
      record = false;
      if (const select::SpecEntry* spec = function_spec(fn)) {
        // An XRay entry sled is the function's first instruction: its registers and its
        // stack arguments above the return address (sp + 16) are the caller's.
        if (saved) note_args(s, nested, t, f, *spec, saved, reinterpret_cast<uintptr_t*>(sp + 16));
        else slow_call(&args_unseen);
      }
    }
  }
  if (record) put_enter(s, nested, t, fn);
  guard_leave(s);
  entry_done();
}

// `saved`: the XRay exit trampoline's save area of the return values (frame.inc's
// RETVALS_SAVE), for a frame whose return value is captured; nullptr from a
// -finstrument-functions hook and an XRay tail sled.
template <Reach kReach>
void exit_slow_as(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t, const uint64_t* saved) {
  constexpr bool kFull = kReach == Reach::kFull;
  if constexpr (!kFull) {
    if (!hot_reach_ok<kReach>(s)) {
      slow_call(&exit_slow, s, fn, sp, t, saved);
      return;
    }
  }
  if (in_runtime()) return;  // its entry was not recorded either (enter_slow)
  if constexpr (kFull) {
    // A return from before this thread's first call: nothing is open, unless frames open
    // at an attach wait for it (attach_inherit.hpp).
    if (!s && !(s = attach_inherit_claim(s))) return;
  }
  if constexpr (kReach != Reach::kHot) {
    if (s->guard & kGuardMonitor) {
      monitor_exit(s, fn, sp);
      return;
    }
  }
  [[maybe_unused]] SlowErrno<kReach> es;
  bool stale = false;
  if constexpr (kFull) {
    if (!revive_if_stopped(s, &stale)) return;
  }
  uint32_t g = s->guard;
  bool nested = guard_enter(s);
  if constexpr (kFull) stale |= handle_rescan(s, nested);
  t = slow_exit_ticks(t, stale);
  if (s->overflow_depth) {
    if (--s->overflow_depth == 0) s->guard &= ~kGuardOverflow;
    if (s->record_depth == 0) put_exit(s, nested, t);
    else note_filtered(s, nested, t);
    guard_leave(s);
    return;
  }
  Frame* f = s->top - 1;
  if (f < s->stack_base || f->fn != fn) {
    Frame* m = find_exit_frame(s, fn, sp);
    if constexpr (!kFull) {
      if (!m) {  // adopting a suspended context may allocate: the full save's work
        guard_leave(s);
        slow_call(&exit_slow, s, fn, sp, t, saved);
        return;
      }
    }
    // A suspended context resumed without the runtime seeing it (context_stash.hpp).
    if (!m && context_adopt(s, fn, sp, nested)) {
      f = s->top - 1;
      m = find_exit_frame(s, fn, sp);
    }
    if (!m) {
      // Attached mid-run: the exit of a call open at the attach, which has no entry (not
      // an error; docs/patching.md, "Attaching").
      if (attach_session() == 0)
        __atomic_fetch_add(&s->header->unmatched_exits, 1, __ATOMIC_RELAXED);
      guard_leave(s);
      return;
    }
    // Frames above the match were left without a return (clang emits no exit hook on the
    // exception path; a longjmp we did not see).
    uint64_t skipped = frames_recorded(s, m + 1, f + 1);
    pop_frames(s, m + 1);
    if (skipped && !nested) s->pending_exits = static_cast<uint32_t>(skipped);
    if (skipped)
      put_unwind(s, nested, t, skipped,
                 (g & kGuardUnwinding) ? UnwindReason::kException : UnwindReason::kUnknown);
    if (!nested) s->pending_exits = 0;
    f = m;
  }
  pop_frame(s, f);
  if (!frame_recorded(s, f)) {
    note_filtered(s, nested, t);
    guard_leave(s);
    return;
  }
  uint64_t depth = static_cast<uint64_t>(f - s->stack_base) + 1;
  if ((g & kGuardUnwinding) && depth <= s->throw_depth) {
    // GCC's cleanup for a frame the exception passes through: an exception exit.
    s->throw_depth = depth - 1;
    if (!nested) s->pending_exits = 1;  // popped, its record owed (put_exit's comment)
    put_unwind(s, nested, t, 1, UnwindReason::kException);
    if (!nested) s->pending_exits = 0;
  } else if (!take_back_short(s, nested, f, t)) {
    put_exit(s, nested, t);
    put_retval_if_wanted(s, nested, t, f, saved);
  }
  guard_leave(s);
}

}  // namespace

void put_retval_if_wanted(ThreadState* s, bool nested, uint64_t t, const Frame* f,
                          const uint64_t* saved) {
  if (!saved || !wants_retval(s, f)) return;
  if (const select::SpecEntry* spec = function_spec(f->fn)) {
    uint64_t from = read_ticks();
    put_retval(s, nested, t, spec->ret_format, saved);
    note_capture(s, nested, from);
  }
}

void enter_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uintptr_t site, uint64_t t) {
  enter_slow_as<Reach::kFull>(s, fn, sp, site, t, nullptr);
}
void xray_enter_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                     const uint64_t* saved) {
  enter_slow_as<Reach::kFull>(s, fn, sp, *reinterpret_cast<const uintptr_t*>(sp + 16), t, saved);
}
void xray_enter_slow_call(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                          const uint64_t* saved) {
  enter_slow_as<Reach::kCall>(s, fn, sp, *reinterpret_cast<const uintptr_t*>(sp + 16), t, saved);
}
void exit_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t, const uint64_t* saved) {
  exit_slow_as<Reach::kFull>(s, fn, sp, t, saved);
}
void exit_slow_call(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                    const uint64_t* saved) {
  exit_slow_as<Reach::kCall>(s, fn, sp, t, saved);
}

void unwind_below(uintptr_t sp, UnwindReason reason) {
  ThreadState* s = attach_inherit_claim(t_state);  // a longjmp past frames open at an attach
  if (!s || (s->guard & kGuardStopped)) return;
  if (s->guard & kGuardMonitor) {
    monitor_unwind_below(s, sp, reason);
    return;
  }
  ErrnoSaver es;
  bool nested = guard_enter(s);
  Frame* f = s->top;
  while (f > s->stack_base && f[-1].sp < sp) --f;
  uint64_t count = frames_recorded(s, f, s->top);
  pop_frames(s, f);
  if (count) put_unwind(s, nested, read_ticks(), count, reason);
  guard_leave(s);
}

void note_throw(unsigned in_flight) {
  ThreadState* s = attach_inherit_claim(t_state);  // hijacked frames open at an attach
  if (!s) return;
  // The unwinder must see the real return addresses of the frames it walks (-pg modes).
  pg_restore_returns();
  // Thrown while another exception is being unwound: from a destructor its cleanup runs.
  // If this one is caught before it leaves the destructor (anything else terminates), the
  // other goes on, and the frames it has still to leave are those it had then. Saved once
  // per level: a rethrow may reach the runtime twice (_Unwind_Resume_or_Rethrow, then
  // _Unwind_RaiseException) with the same count.
  if ((s->guard & kGuardUnwinding) && in_flight >= 2 && s->outer_count < in_flight - 1 &&
      s->outer_count < kOuterExceptions)
    s->outer_depth[s->outer_count++] = s->throw_depth;
  s->throw_depth = static_cast<uint64_t>(s->top - s->stack_base);
  s->guard |= kGuardUnwinding;
}

void note_catch(uintptr_t sp, unsigned in_flight) {
  ThreadState* s = t_state;
  if (!s) return;
  unwind_below(sp, UnwindReason::kException);
  if (in_flight >= 2 && s->outer_count >= in_flight - 1) {
    // Caught inside a cleanup's destructor: the outer exception still propagates once the
    // destructor returns (note_resume puts the return addresses back for it).
    s->outer_count = in_flight - 2;
    s->throw_depth = s->outer_depth[s->outer_count];
  } else {
    s->outer_count = 0;
    s->guard &= ~kGuardUnwinding;
  }
  pg_hijack_returns();  // the frames that stay open return through the trampoline again
}

// Why at the landing pad and not only at the catch: a cleanup's landing pad runs code (the
// destructors) in its frame while the frames deeper than it are still on the shadow
// stack. In the -pg modes their slots are reused by the destructors' calls, and a call
// finding an abandoned frame with its own slot would take it for a tail call's and return
// to the abandoned frame's caller (a crash at -O2); in every mode the destructors' calls
// would nest under frames that no longer exist.
void note_landing(uintptr_t sp) {
  ThreadState* s = t_state;
  if (!s || !(s->guard & kGuardUnwinding)) return;
  unwind_below(sp, UnwindReason::kException);
  // The landing pad's own frame is the deepest the exception has still to leave: the
  // destructors it calls return normally (GCC's -finstrument-functions exits would
  // otherwise take them for frames left by the exception).
  uint64_t depth = static_cast<uint64_t>(s->top - s->stack_base);
  if (depth < s->throw_depth) s->throw_depth = depth;
}

// A cleanup's landing pad ran with kGuardUnwinding still set, unless an exception thrown
// and caught inside it (in a destructor) cleared it and hijacked the return addresses
// again: the unwinder resumes from the cleanup's frame and must find the real ones.
void note_resume() {
  ThreadState* s = attach_inherit_claim(t_state);
  if (!s) return;
  pg_restore_returns();
  s->throw_depth = static_cast<uint64_t>(s->top - s->stack_base);
  s->guard |= kGuardUnwinding;
}

void note_pause(uint64_t from, uint64_t to) {
  if (!t_state) return;  // no call of this thread is open to charge it to
  with_thread([&](ThreadState* s, bool nested) {
    if (!nested) put_pause(s, from, to);
  });
}

void note_special(SpecialCode code, const uint64_t* fields, unsigned nfields) {
  with_thread([&](ThreadState* s, bool nested) {
    write_special(s, nested, code, read_ticks(), fields, nfields);
  });
}

void note_thread_vanishing() {
  ThreadState* s = t_state;
  if (!s || in_runtime() || (s->guard & (kGuardStopped | kGuardMonitor))) return;
  ErrnoSaver es;
  bool nested = guard_enter(s);
  put_hidden(s, nested, read_ticks());  // nothing from a handler on top of a hook
  guard_leave(s);
}

}  // namespace callmon::rt
