// Signal handlers the program installs run inside a wrapper of the runtime's
// (interpose_signal.cpp), which keeps, per thread, a small stack of the handlers running:
// where each one's signal frame is, what it interrupted (the stack pointer, the busy count
// of the hooks' guard, the shadow stack's depth). A handler that leaves by longjmp abandons
// what it interrupted, possibly one of callmon's hooks in the middle of its work; the
// longjmp interposer asks here to put the thread's state back as the jump's target had it.
#pragma once

#include <cstdint>

namespace callmon::rt {

// Called by the longjmp interposers (interpose_exceptions.cpp) before the real jump to a
// target whose stack pointer is `target`. When the target lies outside the innermost
// running handler (not between the caller's frame and that handler's signal frame), every
// handler it leaves is popped: the hooks' busy count goes back to what the target's
// context had, the handlers' frames and the interrupted context's frames deeper than the
// target get a longjmp UNWIND, and a shadow frame the interrupted hook had published but
// not filled is dropped. Nothing happens for a jump that stays inside the handler.
// Async-signal-safe.
void signal_contexts_leave(uintptr_t target);

// `record -p` (attach_entry.cpp). Looks libc's sigaction up (dlsym: a lock) while the
// program runs, so that signal_handlers_wrap takes none.
void signal_handlers_prepare();

// `record -p` (attach_entry.cpp, callmon_attach_wrap). With every other thread stopped,
// right after the attach redirected the program's GOT words of the installers to the
// interposers (and stepped every thread out of libc's installers): every handler the
// kernel holds is put inside the wrapper, as the sigaction interposer would have (its mask
// and flags kept, SA_SIGINFO added); signals with the default action, ignored, or glibc's
// own (SIGCANCEL, SIGSETXID) are left alone. From then on every install through the
// program's GOT goes through the interposers, so none stays unwrapped (one made between
// the attach's start and its patches, through libc, did before). No lock, no allocation.
void signal_handlers_wrap();

// `record -p`, a pass while attached (attach_dlopen.cpp), with the program's other threads
// running, after the pass redirected the new modules' GOT words of the installers: every
// handler the kernel holds unwrapped — one a new module's constructor installed through
// its own GOT word, still libc's while the loader ran it — is put inside the wrapper, as
// signal_handlers_wrap does. The interposers wait meanwhile (a lock they share with it,
// held with signals blocked), so none of their installs is overwritten; an install
// through libc directly that lands between the read and the write is seen in the old
// action the write returns and wrapped in its turn. Takes dlsym's lock only if
// sigaction was never resolved; allocates nothing. Not from a signal handler.
void signal_handlers_wrap_running();

// The calling thread's stack of running handlers, for the detach to read from another
// thread while this one is stopped (attach_threads.cpp keeps it with the thread's state).
struct HandlerStackRef {
  const void* contexts = nullptr;
  const uint32_t* count = nullptr;
};
HandlerStackRef signal_contexts_self();

// With the thread of `ref` stopped: whether one of its running handlers interrupted code
// in [lo, hi) (the pc its signal frame saved): the handler will return there. The saved pcs
// are read through the kernel (process_vm_readv), so a stale entry whose signal frame's
// memory is gone reads as nothing instead of faulting. No lock, no allocation.
bool signal_contexts_interrupted_in(HandlerStackRef ref, uintptr_t lo, uintptr_t hi);

// At the detach, every other thread stopped: each signal whose action is the wrapper gets
// the program's handler back, with its flags (SA_SIGINFO as the program had it) and mask.
// A handler running at that moment finishes inside the wrapper. No lock, no allocation.
void signal_handlers_unwrap();

// Called by the exit and quick_exit interposers (interpose_exit.cpp) before the real call,
// and by the _Unwind_ForcedUnwind interposer (pthread_exit, cancellation) before the
// unwind: neither ever returns into what a running handler interrupted, so a hook it
// interrupted never finishes, and its busy count on the guard would make every call of the
// atexit handlers and static destructors (of the unwind's cleanups and the thread's
// destructors) a nested record (and, past the chunk's margin, a lost one). The busy count
// goes to 0 (in the handler stack's entries too), as a jump out of the handlers to the
// program's code would set it, and the interrupted hook's half-done trace state is put
// right as for such a jump (PAD sites, a chunk restart after a commit whose state update
// was abandoned); no frame is closed: the handlers' calls are still running, under exit
// (or the unwind, and end with the thread). Nothing happens outside a handler.
// Async-signal-safe.
void signal_contexts_exit();

}  // namespace callmon::rt
