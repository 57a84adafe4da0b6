// fork and exec: a FORK record in the parent (the child sets itself up in the
// pthread_atfork handler), an EXEC record and an environment that keeps the new image
// recording (the program may pass an envp without our variables: child_env.hpp).
#include <alloca.h>
#include <stdarg.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdint>

#include "runtime/interposers/child_env.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/static_program.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/patching/sled_patch.hpp"
#include "runtime/core/sys.hpp"

using namespace callmon::rt;

extern char** environ;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

CALLMON_EXPORT pid_t fork() {
  resolve_real_functions();
  pid_t child = g_real.fork_();
  if (child > 0) note_fork_parent(child);
  return child;
}

namespace {

// The pid the thread states belong to: set by the runtime's constructor and in every fork
// child (pthread_atfork, which vfork does not run), in recording and monitor mode alike.
pid_t g_own_pid = 0;

void note_own_pid() { g_own_pid = getpid(); }

void before_exec(const char* path) {
  if (!t_state || in_vfork_child()) return;
  RuntimeScope rs;
  note_special(callmon::format::kCodeExec, nullptr, 0);
  char line[4200];
  LineBuf b(line, sizeof line);
  b.str("exec ").dec(read_ticks()).ch(' ').str(path ? path : "?").ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

// exec returned: it failed and this image goes on. The EXEC record is not the stream's last
// and readers ignore it; the meta file is told too.
int after_failed_exec(int result) {
  if (t_state && !in_vfork_child()) {
    ErrnoSaver es;
    RuntimeScope rs;
    char line[64];
    LineBuf b(line, sizeof line);
    b.str("exec-failed ").dec(read_ticks()).ch('\n');
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  }
  return result;
}

}  // namespace

namespace callmon::rt {
// getpid is a system call (glibc caches no pid), so it tells the child from the process the
// state belongs to.
bool in_vfork_child() { return g_own_pid != 0 && getpid() != g_own_pid; }

void note_fork_parent(pid_t child) {
  if (!t_state) return;
  ErrnoSaver es;
  RuntimeScope rs;
  uint64_t pid = static_cast<uint64_t>(child);
  note_special(callmon::format::kCodeFork, &pid, 1);
  char line[96];
  LineBuf b(line, sizeof line);
  b.str("fork ").dec(read_ticks()).ch(' ').dec(pid).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

void raw_fork_child() {
  // The handlers pthread_atfork registered, in their order (exec_wrappers_init's first).
  note_own_pid();
  fork_child_handler();
}

void exec_wrappers_init() {
  exit_wrappers_init();  // the process's other end, resolved with it
  note_own_pid();
  pthread_atfork(nullptr, nullptr, note_own_pid);
}
}  // namespace callmon::rt

CALLMON_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  resolve_real_functions();
  before_exec(path);
  note_static_program(path, false);
  CALLMON_CHILD_ENV(envp, env);
  return after_failed_exec(g_real.execve_(path, argv, env));
}

CALLMON_EXPORT int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

CALLMON_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  resolve_real_functions();
  before_exec(file);
  note_static_program(file, true);
  CALLMON_CHILD_ENV(envp, env);
  return after_failed_exec(g_real.execvpe_(file, argv, env));
}

CALLMON_EXPORT int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

CALLMON_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  resolve_real_functions();
  before_exec("(fexecve)");
  CALLMON_CHILD_ENV(envp, env);
  return after_failed_exec(g_real.fexecve_(fd, argv, env));
}

// execl, execlp, execle: collect the variadic arguments into an argv on the stack.
#define COLLECT_ARGS(first, last_named, argv_var, envp_var, want_env)            \
  size_t argc_ = 1;                                                              \
  {                                                                              \
    va_list ap;                                                                  \
    va_start(ap, last_named);                                                    \
    while (va_arg(ap, char*)) ++argc_;                                           \
    va_end(ap);                                                                  \
  }                                                                              \
  char** argv_var = static_cast<char**>(alloca((argc_ + 1) * sizeof(char*)));    \
  char* const* envp_var = environ;                                               \
  {                                                                              \
    va_list ap;                                                                  \
    va_start(ap, last_named);                                                    \
    argv_var[0] = const_cast<char*>(first);                                      \
    for (size_t i = 1; i <= argc_; ++i) argv_var[i] = va_arg(ap, char*);         \
    if (want_env) envp_var = va_arg(ap, char* const*);                           \
    va_end(ap);                                                                  \
  }

CALLMON_EXPORT int execl(const char* path, const char* arg, ...) {
  COLLECT_ARGS(arg, arg, argv, envp, false);
  return execve(path, argv, envp);
}

CALLMON_EXPORT int execlp(const char* file, const char* arg, ...) {
  COLLECT_ARGS(arg, arg, argv, envp, false);
  return execvpe(file, argv, envp);
}

CALLMON_EXPORT int execle(const char* path, const char* arg, ...) {
  COLLECT_ARGS(arg, arg, argv, envp, true);
  return execve(path, argv, envp);
}

// dlopen: see arch/x86_64/dl_trampolines.S. Called with dlopen's own arguments before
// the real dlopen runs; returns the real function to jump to.
// The calling thread's next hook takes the slow path (a guard bit) and rescans; that is
// at the latest the first call into the new library, or its constructors.
static void rescan_soon() {
  RuntimeScope rs;
  __atomic_add_fetch(&g_dl_generation, 1, __ATOMIC_ACQ_REL);
  request_rescan();
  sled_request_pass();  // the new module's nop sleds (sled_patch.hpp)
  if (ThreadState* s = t_state) __atomic_or_fetch(&s->guard, kGuardRescan, __ATOMIC_RELAXED);
}

extern "C" __attribute__((visibility("hidden"))) void* callmon_before_dlopen() {
  resolve_real_functions();
  rescan_soon();
  return reinterpret_cast<void*>(g_real.dlopen_);
}

extern "C" __attribute__((visibility("hidden"))) void* callmon_before_dlmopen() {
  resolve_real_functions();
  rescan_soon();
  return reinterpret_cast<void*>(g_real.dlmopen_);
}
