// The open frames of suspended ucontext contexts (makecontext/swapcontext/setcontext
// coroutines). The shadow stack holds the frames of the context that runs; a switch sets
// them aside under the outgoing context's ucontext_t (the `key`) and brings back those of
// the incoming one, so every context keeps its own frames and returns through its own
// (docs/runtime.md, "Stack switching (ucontext)").
//
// In the recording a switch-out is an UNWIND of reason 4 (suspended) of the outgoing
// frames, a switch-in an INHERIT of the incoming ones: the analysis sees each context's
// calls on their own stack, a resumed call as a continuation (inherited: no new call), and
// the time a call was suspended is in no call of its context.
#pragma once

#include <cstdint>

#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// swapcontext(out, in) and setcontext(in) (interpose_context.cpp), from the program's own
// code, before the real switch: sets the calling thread's frames aside under `out`
// (nullptr: a setcontext, which saves nothing; kept anonymously in case the stack is
// resumed by a context saved earlier) and brings back those set aside under `in`, if any.
// `in_sp`: the stack pointer `in` resumes with. A context with no frames set aside whose
// stack pointer lies up the current context's open frames (saved by getcontext in one of
// them) is a jump up the stack, as longjmp's: the frames below it are closed instead.
// `in_window` 0: `in` is the key the incoming context was set aside under. Otherwise the
// incoming context is the one whose key is the lowest in (in, in + in_window]: Boost.Context
// names a suspended context by the stack pointer its switch left (an fcontext_t), which
// lies a little below the frame of the interposer that set its frames aside.
void context_switch(const void* out, const void* in, uintptr_t in_sp, uintptr_t in_window = 0);

// After the real swapcontext(out, ...) returned: the context `out` runs again. If the
// runtime did not see the switch back (glibc's __start_context resumes a finished
// context's uc_link without the PLT), its frames are brought back now.
void context_resumed(const void* out);

// An exit slow path found no frame for a return on the shadow stack: if a suspended
// context holds it (its slot `sp`, -pg modes; or function `fn` at frame address `sp`,
// -finstrument-functions mode with fn != 0), that context runs again, switched to without
// the runtime seeing it: its frames come back, the current ones are set aside
// anonymously. Returns whether it did. The caller holds the guard (`nested` as it got it).
bool context_adopt(ThreadState* s, uintptr_t fn, uintptr_t sp, bool nested);

// At the detach of an attach (attach_threads.cpp), every other thread stopped: calls
// `put_back` on each frame of every suspended context, oldest first per context (their
// redirected returns must not outlive the recording), and forgets them all. False, with
// nothing done, if a thread holds the table (it cannot: the detach waits for threads busy
// in the runtime).
bool context_stash_detach(void (*put_back)(const Frame& f));

// In a fork child (pthread_atfork): the table's lock as free. The thread that held it,
// mid-switch, does not exist there; its half-made entry is the child's to ignore.
void context_stash_after_fork();

}  // namespace callmon::rt
