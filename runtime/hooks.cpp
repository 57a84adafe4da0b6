// Slow paths of the hooks: set-up, nesting, unwinding and mismatched returns.
#include "runtime/hooks.hpp"

#include "runtime/clock.hpp"
#include "runtime/event_writer.hpp"
#include "runtime/process.hpp"
#include "runtime/sys.hpp"

namespace callmon::rt {

using format::SpecialCode;
using format::UnwindReason;

void put_enter(ThreadState* s, bool nested, uint64_t t, uintptr_t fn) {
  if (nested) {
    uint64_t a = fn;
    write_special(s, true, format::kCodeEnter, t, &a, 1);
  } else {
    write_enter(s, t, fn);
  }
}

void put_exit(ThreadState* s, bool nested, uint64_t t) {
  if (nested) write_special(s, true, format::kCodeExit, t, nullptr, 0);
  else write_exit(s, t);
}

void put_unwind(ThreadState* s, bool nested, uint64_t t, uint64_t count, UnwindReason r) {
  uint64_t f[2] = {count, static_cast<uint64_t>(r)};
  write_special(s, nested, format::kCodeUnwind, t, f, 2);
}

// After a dlopen: the new module's `module` line must be written before its functions'
// addresses are of any use. Not from a nested hook (dl_iterate_phdr takes a lock).
void handle_rescan(ThreadState* s, bool nested) {
  if (nested || !(s->guard & kGuardRescan)) return;
  s->guard &= ~kGuardRescan;
  if (take_rescan_request()) modules_rescan();
}

namespace {

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

template <class Body>
bool with_thread(Body&& body) {
  ThreadState* s = t_state;
  if (!s && !(s = thread_setup())) return false;
  if (s->guard & kGuardStopped) return false;
  ErrnoSaver es;
  bool nested = guard_enter(s);
  body(s, nested);
  guard_leave(s);
  return true;
}

void enter_slow(ThreadState* s, uintptr_t fn, uintptr_t sp) {
  ErrnoSaver es;
  if (!s && !(s = thread_setup())) return;
  if (s->guard & kGuardStopped) {
    __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
    return;
  }
  bool nested = guard_enter(s);
  handle_rescan(s, nested);
  uint64_t t = read_ticks();
  Frame* f = s->top;
  if (f == s->stack_limit) {
    // Out of shadow stack: the call is still recorded; its frame is only counted.
    s->overflow_depth++;
    s->guard |= kGuardOverflow;
  } else {
    s->top = f + 1;
    signal_fence();  // publish the slot before filling it: a nested hook pushes above it
    f->fn = fn;
    f->sp = sp;
    f->ret = 0;
  }
  put_enter(s, nested, t, fn);
  guard_leave(s);
}

void exit_slow(ThreadState* s, uintptr_t fn, uintptr_t sp) {
  if (!s) return;  // a return from before this thread's first call: nothing is open
  ErrnoSaver es;
  if (s->guard & kGuardStopped) {
    __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
    return;
  }
  uint32_t g = s->guard;
  bool nested = guard_enter(s);
  handle_rescan(s, nested);
  uint64_t t = read_ticks();
  if (s->overflow_depth) {
    if (--s->overflow_depth == 0) s->guard &= ~kGuardOverflow;
    put_exit(s, nested, t);
    guard_leave(s);
    return;
  }
  Frame* f = s->top - 1;
  if (f < s->stack_base || f->fn != fn) {
    Frame* m = find_exit_frame(s, fn, sp);
    if (!m) {
      __atomic_fetch_add(&s->header->unmatched_exits, 1, __ATOMIC_RELAXED);
      guard_leave(s);
      return;
    }
    // Frames above the match were left without a return (clang emits no exit hook on the
    // exception path; a longjmp we did not see).
    uint64_t skipped = static_cast<uint64_t>(f - m);
    s->top = m + 1;
    put_unwind(s, nested, t, skipped,
               (g & kGuardUnwinding) ? UnwindReason::kException : UnwindReason::kUnknown);
    f = m;
  }
  s->top = f;
  uint64_t depth = static_cast<uint64_t>(f - s->stack_base) + 1;
  if ((g & kGuardUnwinding) && depth <= s->throw_depth) {
    // GCC's cleanup for a frame the exception passes through: an exception exit.
    s->throw_depth = depth - 1;
    put_unwind(s, nested, t, 1, UnwindReason::kException);
  } else {
    put_exit(s, nested, t);
  }
  guard_leave(s);
}

void unwind_below(uintptr_t sp, UnwindReason reason) {
  ThreadState* s = t_state;
  if (!s || (s->guard & kGuardStopped)) return;
  ErrnoSaver es;
  bool nested = guard_enter(s);
  Frame* f = s->top;
  while (f > s->stack_base && f[-1].sp < sp) --f;
  uint64_t count = static_cast<uint64_t>(s->top - f);
  if (count) {
    s->top = f;
    put_unwind(s, nested, read_ticks(), count, reason);
  }
  guard_leave(s);
}

void note_throw() {
  ThreadState* s = t_state;
  if (!s) return;
  // The unwinder must see the real return addresses of the frames it walks (-pg modes).
  pg_restore_returns();
  s->throw_depth = static_cast<uint64_t>(s->top - s->stack_base);
  s->guard |= kGuardUnwinding;
}

void note_catch(uintptr_t sp) {
  ThreadState* s = t_state;
  if (!s) return;
  unwind_below(sp, UnwindReason::kException);
  s->guard &= ~kGuardUnwinding;
  pg_hijack_returns();  // the frames that stay open return through the trampoline again
}

void note_special(SpecialCode code, const uint64_t* fields, unsigned nfields) {
  with_thread([&](ThreadState* s, bool nested) {
    write_special(s, nested, code, read_ticks(), fields, nfields);
  });
}

}  // namespace callmon::rt
