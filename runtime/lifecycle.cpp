// The library's constructor and destructor: resolve the interposed functions early, and
// finish the recording when the process exits through exit().
#include <dlfcn.h>
#include <pthread.h>

#include "runtime/interpose.hpp"
#include "runtime/process.hpp"

namespace callmon::rt {

RealFunctions g_real;

template <class T>
static void resolve(T& slot, const char* name) {
  if (!slot) slot = reinterpret_cast<T>(dlsym(RTLD_NEXT, name));
}

void resolve_real_functions() {
  resolve(g_real.raise_exception, "_Unwind_RaiseException");
  resolve(g_real.resume_or_rethrow, "_Unwind_Resume_or_Rethrow");
  resolve(g_real.forced_unwind, "_Unwind_ForcedUnwind");
  resolve(g_real.begin_catch, "__cxa_begin_catch");
  resolve(g_real.longjmp_, "longjmp");
  resolve(g_real.under_longjmp, "_longjmp");
  resolve(g_real.siglongjmp_, "siglongjmp");
  resolve(g_real.longjmp_chk, "__longjmp_chk");
  resolve(g_real.fork_, "fork");
  resolve(g_real.execve_, "execve");
  resolve(g_real.execvpe_, "execvpe");
  resolve(g_real.fexecve_, "fexecve");
  resolve(g_real.dlopen_, "dlopen");
  resolve(g_real.dlmopen_, "dlmopen");
}

// Priority 101: before ordinary constructors, so even their hooks find the functions.
__attribute__((constructor(101))) static void callmon_runtime_init() {
  resolve_real_functions();
  pthread_atfork(nullptr, nullptr, fork_child_handler);
}

// Runs late in exit(): the program's atexit handlers and static destructors have run.
__attribute__((destructor(101))) static void callmon_runtime_fini() { process_finish(); }

}  // namespace callmon::rt
