// The runtime's side of attach (docs/patching.md, "Attaching"): the states of the threads
// that record, so that the detach can end every thread's file from one thread while the
// others are stopped, and the next attach can give a thread whose state is still there a
// new file.
#pragma once

#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// The attach session recording now: 1 for the first attach, 2 for the next...; 0 when
// none (not attached, or the process was started under `callmon record`).
unsigned attach_session();
// Makes `n` the session recording now (0: none).
void attach_set_session(unsigned n);

// Called by thread_setup for every new state, and when a state is released.
void attach_note_thread(ThreadState* s);
void attach_forget_thread(ThreadState* s);

// A state stopped by an earlier session's detach, reached by its own thread's hook in a
// later session: opens a new event file for it, with its open frames as INHERIT records,
// and returns true. False otherwise (the state stays stopped).
bool attach_revive(ThreadState* s);

// Detach, with every other thread stopped. Whether some thread is inside a hook (its
// guard's busy bits), which would then write after its file was ended, or has a signal
// handler running that interrupted the runtime's code [text_lo, text_hi) (a hook before
// its guard was raised, the exit trampoline before it popped its frame): that handler
// would return into code whose frame and file the stop is about to take away.
bool attach_threads_busy(uintptr_t text_lo, uintptr_t text_hi);
// Ends the file of every thread of the session (END, header) and unmaps it; puts back
// every return address the -pg entry hooks redirected to the exit trampoline and empties
// the shadow stacks. The states stay, stopped, for the next attach. Takes no lock.
void attach_end_threads();

}  // namespace callmon::rt
