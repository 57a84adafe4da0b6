// Monitor mode of the runtime: instead of recording, every hook of the process calls the
// user's callmon::Monitor (include/callmon/monitor.hpp). A process records (CALLMON_DIR,
// set by `callmon record`) or runs a monitor, never both.
//
// Zero cost for recording: a monitored thread carries kGuardMonitor in ThreadState::guard,
// a bit the fast paths already test, so all its hooks take the slow paths (hooks.cpp,
// hooks_pg.cpp), which hand them to the functions below. The shadow stack stays the
// runtime's; beside it each slot has a public callmon::Frame the monitor can read.
// The callbacks themselves run in callmon_monitor_call_enter/_exit only (errno kept), which
// the -pg and XRay probes reach behind the hot vector save (hooks.hpp, Reach::kCall;
// docs/runtime.md, "Monitor mode and the vector state").
//
// Re-entrancy: callbacks run with the thread's busy guard held, so hooks reached from a
// callback (or from a signal handler interrupting one) are nested and are ignored here: no
// frame, no callback, and in the -pg modes no return-address hijack.
#pragma once

#include <cstdint>

#include "callmon/format/records.hpp"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// Whether the process asks for a monitor: CALLMON_MONITOR is set or the program (or a
// library it links) defines the factory. Cheap; usable from the library constructor.
bool monitor_requested();

// At process set-up when nothing is recorded: loads the monitor (dlopen of CALLMON_MONITOR,
// else the linked-in factory) and creates it. Returns false (one diagnostic if something
// was asked for and failed) when there is none; the process then runs untouched.
bool monitor_load();

// Whether the process runs a monitor (set by monitor_load, read-only afterwards).
bool monitor_mode();

// Gives a new thread state its monitor part and the kGuardMonitor bit. False on failure.
bool monitor_thread_setup(ThreadState* s);
// Reports calls still open as kUnfinished and calls on_thread_exit (once). Frames stay on
// the shadow stack: in the -pg modes their returns still need their real addresses.
void monitor_thread_finish(ThreadState* s);
// At exit(): monitor_thread_finish for the calling thread, then on_process_exit.
void monitor_process_finish();
// Unmaps the thread's monitor part (a released or forked-away state).
void monitor_release(ThreadState* s);

// In a fork's child (from the atfork handler): the forking thread's ids become the child's.
void monitor_after_fork_child(ThreadState* s);

// The slow paths' monitor branches. `s` is set up and has kGuardMonitor.
// -finstrument-functions enter/exit: `sp` the hook's frame address, `site` the call site.
void monitor_enter(ThreadState* s, uintptr_t fn, uintptr_t sp, uintptr_t site);
void monitor_exit(ThreadState* s, uintptr_t fn, uintptr_t sp);
// A frame the -pg entry pushed (not nested): reports its on_enter; `site` its real return
// address, `t` the hook's tick. Called with the busy guard held.
void monitor_entered(ThreadState* s, Frame* f, uintptr_t site, uint64_t t);
// Ends the frames from the innermost down to `last` (inclusive) with `how`, innermost
// first, popping each. Called with the busy guard held, not nested.
void monitor_end_frames(ThreadState* s, Frame* last, uint64_t t, uint32_t how);
// unwind_below in monitor mode: ends the frames deeper than `sp`.
void monitor_unwind_below(ThreadState* s, uintptr_t sp, format::UnwindReason reason);

// callmon::ExitKind values, for callers that do not include the public header.
inline constexpr uint32_t kExitNormal = 0, kExitException = 1, kExitLongjmp = 2,
                          kExitUnknown = 3, kExitUnfinished = 4;

}  // namespace callmon::rt
