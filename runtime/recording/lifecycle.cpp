// The library's constructor and destructor: resolve the interposed functions early, and
// finish the recording when the process exits through exit().
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/child_env.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/core/start_env.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/patching/sled_patch.hpp"

namespace callmon::rt {

RealFunctions g_real;
unsigned g_dl_generation = 0;

// `name` in a module loaded with RTLD_LOCAL (not the runtime's own definition), or
// nullptr: dlsym(RTLD_NEXT) sees only the global scope, and a C program that dlopens a C++
// library gets libstdc++ and libgcc_s that way. Their throws reach the runtime's
// _Unwind_RaiseException (preloaded, it binds first), whose real one was then null: the
// program died of SIGSEGV. Each loaded module is opened again (RTLD_NOLOAD) and its
// local scope searched; the modules' list is walked from the program's link map.
static void* find_local(const char* name) {
  void* program = dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
  link_map* lm = nullptr;
  if (!program || dlinfo(program, RTLD_DI_LINKMAP, &lm) != 0) lm = nullptr;
  Dl_info own{};
  dladdr(reinterpret_cast<void*>(&find_local), &own);
  void* found = nullptr;
  for (; lm && !found; lm = lm->l_next) {
    if (!lm->l_name || !lm->l_name[0]) continue;
    void* h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    void* p = dlsym(h, name);
    Dl_info where{};
    if (p && dladdr(p, &where) && where.dli_fbase != own.dli_fbase) found = p;
    dlclose(h);
  }
  if (program) dlclose(program);
  return found;
}

template <class T>
static void resolve(T& slot, const char* name) {
  if (!slot) slot = reinterpret_cast<T>(dlsym(RTLD_NEXT, name));
}

// The functions only a module loaded RTLD_LOCAL may define (libgcc_s's unwinder,
// libstdc++'s exception ABI, Boost.Context's switches), each looked up in the local scopes
// when still missing after dlsym's pass and the caller asks `again`, at most once per
// loader generation: find_local opens every loaded module again.
template <class T>
static void resolve_local(T& slot, const char* name, unsigned& tried, unsigned gen) {
  if (slot || __atomic_load_n(&tried, __ATOMIC_RELAXED) == gen) return;
  __atomic_store_n(&tried, gen, __ATOMIC_RELAXED);
  slot = reinterpret_cast<T>(find_local(name));
}

static void resolve_local_scopes(unsigned gen) {
  static unsigned tried[10] = {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u};
  resolve_local(g_real.raise_exception, "_Unwind_RaiseException", tried[0], gen);
  resolve_local(g_real.resume_or_rethrow, "_Unwind_Resume_or_Rethrow", tried[1], gen);
  resolve_local(g_real.forced_unwind, "_Unwind_ForcedUnwind", tried[2], gen);
  resolve_local(g_real.begin_catch, "__cxa_begin_catch", tried[3], gen);
  resolve_local(g_real.set_ip, "_Unwind_SetIP", tried[4], gen);
  resolve_local(g_real.get_cfa, "_Unwind_GetCFA", tried[5], gen);
  resolve_local(g_real.resume, "_Unwind_Resume", tried[6], gen);
  resolve_local(g_real.cxa_get_globals, "__cxa_get_globals", tried[7], gen);
  resolve_local(g_real.jump_fcontext_, "jump_fcontext", tried[8], gen);
  resolve_local(g_real.ontop_fcontext_, "ontop_fcontext", tried[9], gen);
}

// The loader generation the last pass looked up in (dl_generation, bumped by dlopen):
// the interposers call resolve_real_functions on every fork, exec, throw and longjmp, and
// a function missing at start-up (a C program has no _Unwind_RaiseException) can only
// appear with a new library.
static unsigned g_resolved_generation = ~0u;

void resolve_real_functions(bool again) {
  unsigned gen = __atomic_load_n(&g_dl_generation, __ATOMIC_ACQUIRE);
  if (!again && __atomic_load_n(&g_resolved_generation, __ATOMIC_ACQUIRE) == gen) return;
  // dlsym allocates (and a failed look-up formats an error) with the program's malloc, if it
  // has one: that is the runtime's work, not the program's.
  RuntimeScope rs;
  resolve(g_real.raise_exception, "_Unwind_RaiseException");
  resolve(g_real.resume_or_rethrow, "_Unwind_Resume_or_Rethrow");
  resolve(g_real.forced_unwind, "_Unwind_ForcedUnwind");
  resolve(g_real.begin_catch, "__cxa_begin_catch");
  resolve(g_real.set_ip, "_Unwind_SetIP");
  resolve(g_real.get_cfa, "_Unwind_GetCFA");
  resolve(g_real.resume, "_Unwind_Resume");
  resolve(g_real.cxa_get_globals, "__cxa_get_globals");
  resolve(g_real.longjmp_, "longjmp");
  resolve(g_real.under_longjmp, "_longjmp");
  resolve(g_real.siglongjmp_, "siglongjmp");
  resolve(g_real.longjmp_chk, "__longjmp_chk");
  resolve(g_real.fork_, "fork");
  resolve(g_real.execve_, "execve");
  resolve(g_real.execvpe_, "execvpe");
  resolve(g_real.fexecve_, "fexecve");
  resolve(g_real.execveat_, "execveat");
  resolve(g_real.posix_spawn_, "posix_spawn");
  resolve(g_real.posix_spawnp_, "posix_spawnp");
  resolve(g_real.system_, "system");
  resolve(g_real.popen_, "popen");
  resolve(g_real.pclose_, "pclose");
  resolve(g_real.dlopen_, "dlopen");
  resolve(g_real.dlmopen_, "dlmopen");
  resolve(g_real.backtrace_, "backtrace");
  resolve(g_real.unwind_backtrace, "_Unwind_Backtrace");
  resolve(g_real.monstartup_, "__monstartup");
  resolve(g_real.mcleanup_, "_mcleanup");
  if (!g_real.mcount_) g_real.mcount_ = reinterpret_cast<uintptr_t>(dlsym(RTLD_NEXT, "mcount"));
  if (!g_real.fentry_) g_real.fentry_ = reinterpret_cast<uintptr_t>(dlsym(RTLD_NEXT, "__fentry__"));
  resolve(g_real.gettimeofday_, "gettimeofday");
  resolve(g_real.time_, "time");
  resolve(g_real.clock_, "clock");
  resolve(g_real.swapcontext_, "swapcontext");
  resolve(g_real.setcontext_, "setcontext");
  resolve(g_real.jump_fcontext_, "jump_fcontext");
  resolve(g_real.ontop_fcontext_, "ontop_fcontext");
  // Read by every hook under --clock=monotonic (clock.hpp): stored atomically.
  if (!__atomic_load_n(&g_real_clock_gettime, __ATOMIC_RELAXED))
    __atomic_store_n(&g_real_clock_gettime,
                     reinterpret_cast<int (*)(clockid_t, timespec*)>(dlsym(RTLD_NEXT, "clock_gettime")),
                     __ATOMIC_RELAXED);
  if (again) resolve_local_scopes(gen);
  __atomic_store_n(&g_resolved_generation, gen, __ATOMIC_RELEASE);
}

// Priority 101: before ordinary constructors, so even their hooks find the functions.
__attribute__((constructor(101))) static void callmon_runtime_init() {
  RuntimeScope rs;
  diag_keep_stderr();   // the stderr callmon's diagnostics may go to, before the program runs
  start_env_capture();  // before the program's constructors can change its environment
  child_env_prepare();  // libcallmon.so's path, found now rather than in a vfork child
  hide_callmon_env();   // the program sees its own environment, as without callmon
  exec_wrappers_init();
  resolve_real_functions();
  pg_setup_forwarding();
  redirect_libc_forced_unwind();
  // Nop sleds (-mnop-mcount, -fpatchable-function-entry) become calls now, before the
  // program's constructors run and before it has threads (sled_patch.cpp).
  sled_patch_modules();
  pthread_atfork(nullptr, nullptr, fork_child_handler);
}

// Runs late in exit(): the program's atexit handlers and static destructors have run.
__attribute__((destructor(101))) static void callmon_runtime_fini() {
  RuntimeScope rs;
  process_finish();
}

}  // namespace callmon::rt
