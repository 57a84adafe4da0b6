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
// parent registers it again.
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/core/runtime_scope.hpp"
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

void finish_at_thread_exit(void*) {
  t_armed = false;
  // A vfork child's exit ran it on the shared TLS: the parent arms again.
  if (in_vfork_child()) {
    note_vfork_child_exit();
    return;
  }
  // Also run by every exit on the main thread (main's return, exit(), pthread_exit as the
  // last thread) with no vfork child's exit before: the runtime's destructor ends the
  // recording then, after the atexit handlers and static destructors.
  if (__atomic_load_n(&g_rearmed, __ATOMIC_ACQUIRE)) process_finish();
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
