// exit and quick_exit: before the real call, a thread inside signal handlers that
// interrupted one of the runtime's hooks gives back the hook's busy count
// (signal_contexts_exit), so that the calls of the atexit (at_quick_exit) handlers and
// static destructors that follow are recorded as the program's, not as nested records of a
// hook that never finishes (docs/runtime.md, "Handlers that leave by exit"). Everywhere
// else they only pass the call on. _exit and _Exit run no code of the program's after them:
// they only write the calling thread's pending counts of unrecorded calls first
// (note_thread_vanishing: up to 1 023 calls a process ending so lost), and are looked up
// at start-up only: they are called from signal handlers and fork children, where dlsym is
// no function to call.
//
// In a vfork child (in_vfork_child) they touch nothing of the runtime's: the thread state
// is the parent's. exit there marks the thread for the parent (note_vfork_child_exit: the
// child's exit is using up the parent's exit handlers); in the parent afterwards, exit
// finishes the recording itself where no TLS destructor of the runtime's will
// (process_finish_at_exit, docs/runtime.md, "Processes").
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/test_signal.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/next_function.hpp"
#include "runtime/interposers/signal_contexts.hpp"
#include "runtime/recording/process.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using ExitFn = void (*)(int);
ExitFn g_real_exit;
ExitFn g_real_quick_exit;
ExitFn g_real__exit;
ExitFn g_real__Exit;

[[noreturn]] void vanish(ExitFn f, int status) {
  if (!in_vfork_child()) note_thread_vanishing();
  if (f) f(status);
  syscall(SYS_exit_group, status);  // not resolved at start-up: end as _exit does
  __builtin_unreachable();
}

// `full`: exit, which runs the atexit handlers and destructors (not quick_exit).
[[noreturn]] void pass_on(ExitFn& slot, const char* name, int status, bool full) {
  if (in_vfork_child()) {
    if (full) note_vfork_child_exit();
  } else {
    signal_contexts_exit();
    if (full) process_finish_at_exit();
  }
  if (ExitFn f = next_function(slot, name)) f(status);
  syscall(SYS_exit_group, status);  // no libc function found: end as _exit would
  __builtin_unreachable();
}

}  // namespace

namespace callmon::rt {
// The next definitions resolved at start-up: dlsym is no function for a signal handler
// (next_function looks them up late only when an exit comes before the constructor).
void exit_wrappers_init() {
  next_function(g_real_exit, "exit");
  next_function(g_real_quick_exit, "quick_exit");
  next_function(g_real__exit, "_exit");
  next_function(g_real__Exit, "_Exit");
  test_hook_signal();  // read now, not first in a hook
}
}  // namespace callmon::rt

CALLMON_EXPORT void exit(int status) noexcept { pass_on(g_real_exit, "exit", status, true); }

CALLMON_EXPORT void quick_exit(int status) noexcept {
  pass_on(g_real_quick_exit, "quick_exit", status, false);
}

CALLMON_EXPORT void _exit(int status) noexcept {
  vanish(__atomic_load_n(&g_real__exit, __ATOMIC_RELAXED), status);
}

CALLMON_EXPORT void _Exit(int status) noexcept {
  vanish(__atomic_load_n(&g_real__Exit, __ATOMIC_RELAXED), status);
}
