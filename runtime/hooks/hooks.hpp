// Slow paths shared by the hook entry points (hooks_cyg.cpp) and the interposers of
// exceptions, longjmp, fork and exec: everything that is not the common call and return.
#pragma once

#include <cstdint>

#include "callmon/format/records.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/selection/filter_select.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// Enters a guarded section of a slow path: returns whether another hook of this thread is
// active below us (we interrupted it from a signal handler).
inline bool guard_enter(ThreadState* s) {
  bool nested = (s->guard & kGuardBusyMask) != 0;
  s->guard += 1;
  signal_fence();
  return nested;
}

inline void guard_leave(ThreadState* s) {
  signal_fence();
  s->guard -= 1;
}

// Guard bits that send a mode's every call to its slow path and whose slow path stays
// integer code within the library (no libc, no code of the program's: a record-time filter
// beyond its fast path's common case, filter_fast_entry below; a full shadow stack). These,
// tail calls, returns that do not match the innermost frame and the monotonic clock go
// through slow_call_hot, which keeps only where arguments and results travel
// (core/slow_call.hpp); every other bit (a hook nested in a signal handler's, an exception
// unwinding, a rescan after dlopen, recording stopped, the runtime's own work) and a
// thread's set-up through slow_call, which saves every vector component in use.
// Monitor mode (kGuardMonitor) is hot where the probe sits at a call boundary the compiler
// placed (Reach::kCall below) and rare at a --patch'ed function's entry and return. Shared
// by the -pg, --patch, library-call and XRay fast paths (hooks_pg.cpp, hooks_xray.cpp);
// tests/audit/fast_path_audit.py checks what the hot slow paths reach.
inline constexpr uint32_t kHotGuards = kGuardFilter | kGuardOverflow;
inline constexpr uint32_t kRareGuards = ~kHotGuards;
inline constexpr uint32_t kCallHotGuards = kHotGuards | kGuardMonitor;

// How a slow path was reached:
//  kFull  through slow_call: it may do anything.
//  kHot   through slow_call_hot from a probe that may sit where the program keeps values in
//         any register (a --patch'ed function's entry, its hijacked return): it must reach
//         no libc, no AVX-512 and no code of the program's.
//  kCall  through slow_call_hot from a probe the compiler placed at a call boundary: an
//         mcount/__fentry__ call (-pg, -pg -mfentry, nop sleds and -fpatchable-function-entry
//         patched to __fentry__, a library call's probe), an XRay sled (a function's entry,
//         its `ret`, a tail call), or the return trampoline of such a frame. There the
//         registers a call may clobber by the ABI are dead but for the arguments or the
//         results, which the trampoline saved (xmm0-7 and the integer ones; rax rdx xmm0
//         xmm1 at a return) or slow_call_hot does (their upper halves): the program's code
//         may run, so as kHot plus a monitor's callbacks (monitor_dispatch.hpp), which may
//         clobber any caller-saved register, zmm16-31 and k0-7 too. Nothing else of the
//         program's and no libc (the audit checks both). Why the compiler keeps nothing
//         there: docs/runtime.md, "Monitor mode and the vector state".
// The values are the audit's: it tells the instances apart by their mangled names.
enum class Reach { kFull = 0, kHot = 1, kCall = 2 };

// The guard bits a slow path reached as kReach may take itself (hot_reach_ok).
template <Reach kReach>
inline constexpr uint32_t kReachGuards = kReach == Reach::kCall ? kCallHotGuards : kHotGuards;

// Whether a slow path reached through slow_call_hot may do its work there: the thread is
// set up and has no guard bit but kReachGuards. Otherwise it hands over to its kFull self
// through slow_call (a bit another thread set since the fast path looked: a rescan).
template <Reach kReach = Reach::kHot>
inline bool hot_reach_ok(const ThreadState* s) {
  return s && !(s->guard & ~kReachGuards<kReach>);
}

// errno kept across a slow path that may call libc (kFull); nothing on a hot one, which
// calls no libc (its nested slow_calls keep errno themselves: switch_chunk, diag; a
// monitor's callbacks are called with errno kept: monitor_dispatch.cpp).
template <Reach kReach>
struct SlowErrno {};
template <>
struct SlowErrno<Reach::kFull> : ErrnoSaver {};

// Record writers of the slow paths: a nested hook writes self-contained SPECIAL records.
// Each first writes the HIDDEN record of what the recorder did unseen since the record
// before (put_hidden), so that analysis takes its cost out of the call it happened in.
void put_hidden(ThreadState* s, bool nested, uint64_t t);
void put_enter(ThreadState* s, bool nested, uint64_t t, uintptr_t fn);
void put_exit(ThreadState* s, bool nested, uint64_t t);
void put_unwind(ThreadState* s, bool nested, uint64_t t, uint64_t count,
                format::UnwindReason r);

// The pending counts of unrecorded calls are written once they reach this many, not only
// before the thread's next record: a thread whose every call is kept out from some point
// on (a worker below --max-depth, or whose calls are all short) and that the process's
// end then stops writes no record again, and its counts were lost, with the compensation of
// those calls' probes (leveldb's compaction thread under --max-depth=4: 15.1 M calls in no
// count). 1024: a process killed (libuv's test helpers, which its runner ends with SIGTERM)
// then loses fewer than 1024 of each thread's (65 535 with the first threshold: 42 249 of
// 42 318 in one helper under --max-depth=4), for a HIDDEN record of ~8 bytes per 1024
// calls left out (0.008 bytes a call).
inline constexpr uint64_t kHiddenFlush = uint64_t{1} << 10;

// Writes the pending counts (a HIDDEN record at `t`, mid-stretch: analysis takes their cost
// out of the stretch it lies in all the same), unless a record now would keep the innermost
// recorded call from being taken back while it still may be (--min-duration): then a later
// call tries again. Out of line, rare: through flush_hidden_if_many.
void flush_hidden(ThreadState* s, uint64_t t);

// flush_hidden once the pending counts reach kHiddenFlush.
inline void flush_hidden_if_many(ThreadState* s, uint64_t t) {
  if (s->hidden_filtered + s->hidden_taken >= kHiddenFlush) [[unlikely]]
    flush_hidden(s, t);
}

// A call whose probes ran but which a filter keeps out of the trace ended (name, depth
// or overflow filter) at `t`: counted for the next HIDDEN record. Not from a nested hook,
// whose count could be lost to the interrupted one's read-modify-write (and whose cost is a
// signal handler's, rare).
inline void note_filtered(ThreadState* s, bool nested, uint64_t t) {
  if (nested) return;
  s->hidden_filtered++;
  flush_hidden_if_many(s, t);
}
// The recorder captured values (arg_capture.hpp) from the clock reading `from` until now:
// counted for the next HIDDEN record. The capture lies in the stretch up to the next
// record, in the call open then, and is measured rather than calibrated: it depends on
// the spec and on the values (a string is read up to its end).
inline void note_capture(ThreadState* s, bool nested, uint64_t from) {
  uint64_t to = read_ticks();
  if (!nested && to > from) s->hidden_capture += to - from;
}

// The record-time duration filter. put_enter_kept writes the ENTER of frame `f` and, when
// the filter is on, remembers where; take_back_short, at the frame's normal exit, removes
// that ENTER again (turning it into PAD and moving the cursor back) when the call was
// shorter than the threshold and nothing was written after it — its callees were all
// short and taken back too. Returns whether it did; the exit is then not written.
void put_enter_kept(ThreadState* s, bool nested, uint64_t t, uintptr_t fn, Frame* f);
bool take_back_short(ThreadState* s, bool nested, Frame* f, uint64_t t);

// The record-time name filter: decides once, at its entry, whether the new frame `f`'s
// function is recorded (filter_select.hpp). A nested hook cannot rescan the modules.
inline constexpr uint8_t kSelectedRetval = 2;  // ThreadState::selected: record the return value
// Never a rescan from the calibration's scratch state (it has no file header): its
// functions are in no module the filter knows.
inline void note_selection(ThreadState* s, Frame* f, bool nested) {
  if (s->selected)
    s->selected[f - s->stack_base] = function_selected(f->fn, !nested && s->header);
}

// Arguments and return values (-A/-R/--auto-args, arg_capture.hpp) of a recorded frame `f`
// just entered with spec `spec`: writes its ARGS record after its ENTER (the duration
// filter then takes both back together) and marks the frame for a RETVAL at its return.
void note_args(ThreadState* s, bool nested, uint64_t t, Frame* f, const select::SpecEntry& spec,
               const uint64_t* saved, const uintptr_t* ret_slot);
// Whether note_args marked `f` for a RETVAL record.
inline bool wants_retval(const ThreadState* s, const Frame* f) {
  return s->selected && (s->selected[f - s->stack_base] & kSelectedRetval);
}

// The record-time filters on the fast paths. With no guard bit but kGuardFilter and no
// duration filter (whose ENTERs are noted for taking back: put_enter_kept), a hook decides
// a new frame by its depth and by the name filter's cached decision (a lookup that misses
// the cache may rescan, and a function may have an argument spec: function_selected_cached
// sends both to the slow path). A recorded call with no counts of unrecorded calls pending
// (their HIDDEN record goes first: put_hidden) is written as without a filter, a call kept
// out is pushed, popped and counted, and anything else takes the slow path. Before, every
// call of a -pg or XRay build under a filter went through callmon_slow_call_hot, whose
// check of the vector state (xgetbv) was most of its cost, and every call of a
// -finstrument-functions build through the full slow path (errno kept, every guard bit
// looked at). The start-up calibration's scratch state takes the same paths.
inline bool filter_fast(const ThreadState* s) {
  return s->guard == kGuardFilter && !s->records;
}
inline bool hidden_pending(const ThreadState* s) {
  return (s->hidden_filtered | s->hidden_taken | s->hidden_capture) != 0;
}
// The decision for a new frame of `fn` at the top of the shadow stack: 1 recorded, 0 kept
// out, -1 the slow path. Below the depth it is kept out whatever its name (frame_recorded
// reads both), so the name filter is not asked.
inline int filter_fast_entry(const ThreadState* s, uintptr_t fn) {
  if (!filter_fast(s) || s->top == s->stack_limit) return -1;
  if (s->record_depth && static_cast<uint64_t>(s->top - s->stack_base) >= s->record_depth)
    return 0;
  int sel = 1;
  if (s->selected && (sel = function_selected_cached(fn)) < 0) return -1;
  return sel && hidden_pending(s) ? -1 : sel;
}
// Marks the frame `f` just pushed with the decision (the name filter's table, which
// frame_recorded reads).
inline void filter_fast_mark(ThreadState* s, const Frame* f, int decision) {
  if (s->selected) s->selected[f - s->stack_base] = static_cast<uint8_t>(decision);
}
// The decision for the exit of frame `f`, the innermost, as for an entry: 1 recorded
// with nothing pending and no return value to capture (a frame the slow path entered with
// an argument spec, before the table had one), 0 kept out while its count does not reach
// kHiddenFlush (the slow path's note_filtered writes them then), -1 the slow path.
inline int filter_fast_exit(const ThreadState* s, const Frame* f) {
  if (!filter_fast(s)) return -1;
  if (frame_recorded(s, f)) return !hidden_pending(s) && !wants_retval(s, f) ? 1 : -1;
  return s->hidden_filtered + s->hidden_taken + 1 < kHiddenFlush ? 0 : -1;
}

// Writes the module lines a dlopen asked for (not from a nested hook); the time that takes
// is written as a PAUSE. Returns whether it did.
bool handle_rescan(ThreadState* s, bool nested);

// A thread stopped by an attach's detach, and attached again since, gets a new file
// (attach_threads.hpp) and `*stale` set (slow_entry_ticks). False when it cannot: the
// call is counted as lost and the hook does nothing more. Slow paths (Reach::kFull) only.
bool revive_if_stopped(ThreadState* s, bool* stale);

// The clock for a slow path's record: `t`, the hook's own read before it, unless it read
// none (0), the clock is the fenced one (an entry's read must come last, as
// write_hook_enter's does, event_writer.hpp; an exit's after an lfence), or `stale`: since
// that read the slow path did work of its own that the record must follow (a thread's
// set-up, a new file, a rescan's PAUSE, an unwind's records). Read twice, the clock made a
// call under a record-time filter cost twice what it needs (one rdtsc of ~9 ns per probe
// on this VM: -finstrument-functions fib, every call kept out, 37 -> 18 ns a call).
inline uint64_t slow_entry_ticks(uint64_t t, bool stale) {
  return t == 0 || stale || g_clock_fenced ? entry_ticks() : t;
}
inline uint64_t slow_exit_ticks(uint64_t t, bool stale) {
  return t == 0 || stale || g_clock_fenced ? exit_ticks() : t;
}

// A hook's enter/exit when the fast path cannot take it: no thread state yet, a hook
// interrupted by a signal (nested), an exception propagating, shadow stack full, a return
// that does not match the innermost frame, monitor mode. `fn` is the function, `sp` the
// hook's frame address, `site` the call site (for a monitor), `t` the clock the hook's stub
// read first thing, or 0 (read here; the slow path also reads again after work of its own
// that the record must follow: a thread's set-up, a new file, a rescan).
// An XRay sled's exit also passes `saved`, its trampoline's save area of the return values
// (frame.inc's RETVALS_SAVE; nullptr otherwise), for a frame whose return value is captured.
void enter_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uintptr_t site, uint64_t t);
void exit_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t, const uint64_t* saved);
// An XRay sled's entry: as enter_slow, its call site being the function's return address
// (at sp + 16), and `saved` the trampoline's save area of the argument registers (frame.inc's
// ARGS_STORE), where an argument spec finds them (docs/record.md, -A).
void xray_enter_slow(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                     const uint64_t* saved);
// The same reached through slow_call_hot from an XRay sled (Reach::kCall): see hot_reach_ok.
void xray_enter_slow_call(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                          const uint64_t* saved);
void exit_slow_call(ThreadState* s, uintptr_t fn, uintptr_t sp, uint64_t t,
                    const uint64_t* saved);
// After the EXIT of frame `f` (popped): its RETVAL record, when note_args marked it for one
// and `saved` (a save area of the return values) is given.
void put_retval_if_wanted(ThreadState* s, bool nested, uint64_t t, const Frame* f,
                          const uint64_t* saved);

// Ends every open call whose frame is deeper than `sp` (the frame address of code that is
// about to run in an outer frame: a catch block, a longjmp target) with an UNWIND record.
void unwind_below(uintptr_t sp, format::UnwindReason reason);

// Notes that a C++ exception starts propagating on this thread: exits the compiler's
// cleanups report for frames open at the throw are exception exits.
// `in_flight`: C++ exceptions thrown and not yet caught on this thread, this one included
// (the Itanium ABI's uncaughtExceptions; 0 if unknown).
void note_throw(unsigned in_flight);
// Notes that a handler caught it in the frame whose frame address is `sp`; `in_flight` as
// for note_throw, this one still included: more than one means this one was thrown and
// caught in a destructor that another one's cleanup runs, and the other still propagates.
void note_catch(uintptr_t sp, unsigned in_flight);
// Notes that the unwinder is about to run a landing pad (a cleanup or a handler) in the
// frame whose stack pointer there, minus 16, is `sp` (the frame address convention of
// note_catch): the frames deeper than it are gone.
void note_landing(uintptr_t sp);
// Notes that a cleanup's landing pad resumes the unwinding (_Unwind_Resume).
void note_resume();

// The -pg modes (hooks_pg.cpp). The return addresses the entry trampolines replaced are
// put back in their stack slots before something walks the stack (an exception's unwinder,
// backtrace()) and replaced again afterwards, for every open frame of the calling thread.
void pg_restore_returns();
void pg_hijack_returns();
// Records the entry of a call of `fn` whose return address is at `slot` (argument registers
// at `saved`) and redirects that return to the -pg exit trampoline, as __fentry__ does: the
// library-call probes' entry (libcall_hooks.cpp).
void pg_enter_at(uintptr_t fn, uintptr_t* slot, const uint64_t* saved);

// Writes a SPECIAL record for the calling thread (FORK, EXEC), from ordinary code.
void note_special(format::SpecialCode code, const uint64_t* fields, unsigned nfields);

// The calling thread is about to vanish without the runtime's end of it (_exit, _Exit):
// the counts of its unrecorded calls still pending (put_hidden) are written. Not in a
// vfork child (the state is the parent's: the caller checks), not on top of a hook.
void note_thread_vanishing();

// The recorder's work from `from` to `to` (read_ticks) outside any hook, done on a thread
// that records (the sled pass a dlsym runs): a PAUSE, as handle_rescan writes for its own.
// Nothing from inside a hook (a signal handler's dlsym) or on a thread without records.
void note_pause(uint64_t from, uint64_t to);

}  // namespace callmon::rt
