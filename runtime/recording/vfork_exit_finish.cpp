// The end of the recording after a vfork child ran exit() (process.hpp,
// process_finish_rearm). glibc's exit in the child ran, on the parent's memory, the
// thread's TLS destructors, the atexit handlers and the dynamic linker's destructor pass
// (the runtime's destructor, process_finish's usual caller, with it), took them off its
// lists and set the flag that makes atexit refuse new ones: the parent's own exit runs none
// of them again. What it still runs is the exiting thread's TLS destructors
// (__cxa_thread_atexit_impl, which that flag does not refuse) and the stdio flush. So
// process_finish is tied to the main thread's TLS destructors (main's return and an exit()
// there), and the exit interposer finishes for an exit() from another thread.
//
// The main thread's destructor is registered at start-up, not when the parent comes back
// from vfork: the thread that vforked may be another one, and only the main thread can
// register its own (glibc keeps the list in its TLS). It does nothing unless a vfork
// child's exit has run since (g_rearmed); the runtime's destructor ends the recording then.
// A vfork child of the main thread uses it up (it runs the main thread's list): that
// parent registers it again. glibc frees the entry right after the destructor returns,
// with the program's free: a program with its own instrumented free would have that call
// recorded as its own. So the destructor marks the thread as the runtime's (as a
// RuntimeScope does) and registers with atexit the handler that lifts the mark: glibc's
// exit runs the TLS destructors before the exit handlers, and the last handler registered
// first, so the mark covers that free and nothing of the program's.
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/recording/process.hpp"

extern "C" int __cxa_thread_atexit_impl(void (*)(void*), void*, void*);
extern "C" void* __dso_handle;  // this library's, for the destructor's bookkeeping

namespace callmon::rt {
namespace {

// A vfork child's exit took the usual path away (read by every thread's exit).
bool g_rearmed = false;
// This thread has a TLS destructor of the runtime's registered (the main thread only).
__thread bool t_armed __attribute__((tls_model("initial-exec")));
// The signal mask the mark of finish_at_thread_exit replaced (only the exiting thread).
uint64_t g_exit_mask;

// Marks the thread as doing the runtime's work, signals blocked (a handler's calls would be
// dropped; blocked, it runs after the mark, recorded), as RuntimeScope does.
void mark_runtime() {
  g_exit_mask = SignalBlock::block_all();
  t_runtime_depth += 1;
  if (ThreadState* s = t_state)
    asm volatile("orl %1, %0" : "+m"(s->guard) : "ir"(kGuardRuntime) : "memory");
}

void unmark_runtime() {
  t_runtime_depth -= 1;
  if (t_runtime_depth == 0)
    if (ThreadState* s = t_state)
      asm volatile("andl %1, %0" : "+m"(s->guard) : "ir"(~kGuardRuntime) : "memory");
  SignalBlock::restore(g_exit_mask);
}

void finish_at_thread_exit(void*) {
  t_armed = false;
  // A vfork child's exit ran it on the shared TLS: the parent arms again.
  if (in_vfork_child()) {
    note_vfork_child_exit();
    return;
  }
  if (__atomic_load_n(&g_rearmed, __ATOMIC_ACQUIRE)) {
    process_finish();  // the free that follows comes after the thread's END
    return;
  }
  // Every exit on the main thread (main's return, exit(), pthread_exit as the last thread)
  // with no vfork child's exit before: the runtime's destructor ends the recording, after
  // the exit handlers. Until the first of them (this one), glibc's free of the entry.
  mark_runtime();
  if (atexit(unmark_runtime) != 0) unmark_runtime();  // refused: that free is recorded
}

// Registers finish_at_thread_exit for the calling thread if it is the main thread and has
// none registered. Calls the program's malloc: not from a hook or a signal handler.
void arm_main_thread() {
  // The child's exit ran (and dropped) a destructor registered before: t_armed is false
  // again then. Only the main thread's TLS destructors run when main returns.
  if (t_armed || syscall(SYS_gettid) != getpid()) return;
  RuntimeScope rs;  // glibc allocates the entry with the program's malloc
  if (__cxa_thread_atexit_impl(finish_at_thread_exit, nullptr, &__dso_handle) == 0)
    t_armed = true;
}

// Preloaded, the runtime's constructors run on the main thread, before the program's
// constructors and threads (an attach's dlopen may run them on another thread: nothing
// then, as before).
__attribute__((constructor)) void arm_at_start() { arm_main_thread(); }

}  // namespace

void process_finish_rearm() {
  __atomic_store_n(&g_rearmed, true, __ATOMIC_RELEASE);
  arm_main_thread();
}

void process_finish_at_exit() {
  if (!__atomic_load_n(&g_rearmed, __ATOMIC_ACQUIRE) || t_armed) return;
  process_finish();
}

}  // namespace callmon::rt
