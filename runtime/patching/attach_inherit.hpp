// The runtime's side of the frames already open when `callmon record -p` attached
// (docs/patching.md, "Attaching"; the table's layout: callmon/attach_inherit_abi.hpp): each
// thread takes the frames the tool found on its stack at its first hook of the session.
// In the -pg modes the tool has already pointed their return addresses to the exit
// trampoline, so every path that may meet one before the thread's first hook (a return
// through it, a throw, a backtrace, a longjmp) claims them first.
#pragma once

#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// With `s` just given a new event file in an attach session (thread_setup, attach_revive):
// pushes the frames the tool listed for the calling thread, outermost first, above those
// already on its shadow stack, and writes the recorded ones as INHERIT records, as a fork
// child writes its open frames. Nothing when the table holds none for this thread and
// session. Blocks signals meanwhile.
void attach_inherit_take(ThreadState* s);

// `s` is the calling thread's state (t_state), nullptr or stopped by an earlier session's
// detach: if the table holds frames for this thread not yet taken, sets the thread up now
// (thread_setup or attach_revive, which take them) and returns its state; else returns `s`.
ThreadState* attach_inherit_claim(ThreadState* s);

// The return address the tool replaced in the slot of frame address `sp` (a -pg frame's,
// Frame::sp) of this session's table, any thread's (a fork child's stack is its parent
// thread's copy), or 0. For a return through the trampoline that finds no frame because
// the thread could not take its own (no file could be made): the program must go on.
uintptr_t attach_inherit_return(uintptr_t sp);

// At the attach (callmon_attach_start): the time a thread's frames are written as
// inherited at when it makes no call while attached (attach_inherit_restore_untaken).
void attach_inherit_note_start();

// Detach, every other thread stopped: a thread still alive that made no call while
// attached (its frames not taken) gets a file of its own with them as INHERIT records and
// END (not with name filters); the return addresses of its frames are put back.
void attach_inherit_restore_untaken();

}  // namespace callmon::rt
