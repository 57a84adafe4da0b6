// The end of the recording after a vfork child ran exit() (process.hpp,
// process_finish_rearm). glibc's exit in the child ran, on the parent's memory, the
// thread's TLS destructors, the atexit handlers and the dynamic linker's destructor pass
// (the runtime's destructor, process_finish's usual caller, with it), took them off its
// lists and set the flag that makes atexit refuse new ones: the parent's own exit runs none
// of them again. What it still runs is the exiting thread's TLS destructors
// (__cxa_thread_atexit_impl, which that flag does not refuse) and the stdio flush. So the
// parent ties process_finish to its main thread's TLS destructors (main's return and an
// exit() there), and the exit interposer finishes for an exit() from another thread.
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
  // A later vfork child's exit ran it on the shared TLS: the parent arms again.
  if (in_vfork_child()) {
    note_vfork_child_exit();
    return;
  }
  process_finish();
}

}  // namespace

void process_finish_rearm() {
  __atomic_store_n(&g_rearmed, true, __ATOMIC_RELEASE);
  // The child's exit ran (and dropped) a destructor registered before: t_armed is false
  // again then. Only the main thread's TLS destructors run at the process's exit.
  if (t_armed || syscall(SYS_gettid) != getpid()) return;
  RuntimeScope rs;  // glibc allocates the entry with the program's malloc
  if (__cxa_thread_atexit_impl(finish_at_thread_exit, nullptr, &__dso_handle) == 0)
    t_armed = true;
}

void process_finish_at_exit() {
  if (!__atomic_load_n(&g_rearmed, __ATOMIC_ACQUIRE) || t_armed) return;
  process_finish();
}

}  // namespace callmon::rt
