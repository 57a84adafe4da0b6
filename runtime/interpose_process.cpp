// fork and exec: a FORK record in the parent (the child sets itself up in the
// pthread_atfork handler), an EXEC record and an environment that keeps the new image
// recording (the program may pass an envp without our variables).
#include <alloca.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>

#include "runtime/clock.hpp"
#include "runtime/hooks.hpp"
#include "runtime/interpose.hpp"
#include "runtime/process.hpp"
#include "runtime/sled_patch.hpp"
#include "runtime/sys.hpp"

using namespace callmon::rt;

extern char** environ;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

CALLMON_EXPORT pid_t fork() {
  resolve_real_functions();
  pid_t child = g_real.fork_();
  if (child > 0 && t_state) {
    uint64_t pid = static_cast<uint64_t>(child);
    note_special(callmon::format::kCodeFork, &pid, 1);
    char line[96];
    LineBuf b(line, sizeof line);
    b.str("fork ").dec(read_ticks()).ch(' ').dec(pid).ch('\n');
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  }
  return child;
}

namespace {

bool starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// Fills `out` (room for n+3 entries) with `envp` plus our variables where missing:
// CALLMON_DIR, CALLMON_TSC_HZ and LD_PRELOAD naming libcallmon.so. `scratch` holds the
// strings built here.
char** recording_env(char* const envp[], char** out, char* scratch, size_t scratch_len) {
  size_t n = 0;
  bool has_dir = false, has_preload = false;
  for (char* const* e = envp; e && *e; ++e) {
    if (starts_with(*e, "CALLMON_DIR=")) has_dir = true;
    if (starts_with(*e, "LD_PRELOAD=")) {
      if (strstr(*e, g_proc.self_path)) {
        has_preload = true;
      } else if (g_proc.self_path[0]) {
        // Keep the program's own preloads, after ours.
        LineBuf b(scratch, scratch_len / 2);
        b.str("LD_PRELOAD=").str(g_proc.self_path).ch(':').str(*e + 11);
        out[n++] = scratch;
        has_preload = true;
        continue;
      }
    }
    out[n++] = *e;
  }
  char* rest = scratch + scratch_len / 2;
  size_t rest_len = scratch_len / 2;
  if (!has_preload && g_proc.self_path[0]) {
    LineBuf b(rest, rest_len / 2);
    b.str("LD_PRELOAD=").str(g_proc.self_path);
    out[n++] = rest;
  }
  if (!has_dir) {
    LineBuf b(rest + rest_len / 2, rest_len / 2);
    b.str("CALLMON_DIR=").str(g_proc.dir);
    out[n++] = rest + rest_len / 2;
  }
  out[n] = nullptr;
  return out;
}

size_t env_count(char* const envp[]) {
  size_t n = 0;
  while (envp && envp[n]) ++n;
  return n;
}

void before_exec(const char* path) {
  if (!t_state) return;
  note_special(callmon::format::kCodeExec, nullptr, 0);
  char line[4200];
  LineBuf b(line, sizeof line);
  b.str("exec ").dec(read_ticks()).ch(' ').str(path ? path : "?").ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

// exec returned: it failed and this image goes on. The EXEC record is not the stream's last
// and readers ignore it; the meta file is told too.
int after_failed_exec(int result) {
  if (t_state) {
    ErrnoSaver es;
    char line[64];
    LineBuf b(line, sizeof line);
    b.str("exec-failed ").dec(read_ticks()).ch('\n');
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  }
  return result;
}

constexpr size_t kScratch = 16384;

}  // namespace

#define WITH_RECORDING_ENV(envp, var)                                                 \
  char** var = static_cast<char**>(alloca((env_count(envp) + 3) * sizeof(char*)));     \
  char* var##_scratch = static_cast<char*>(alloca(kScratch));                          \
  recording_env(envp, var, var##_scratch, kScratch)

CALLMON_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  resolve_real_functions();
  if (!g_proc.dir[0]) return g_real.execve_(path, argv, envp);
  before_exec(path);
  WITH_RECORDING_ENV(envp, env);
  return after_failed_exec(g_real.execve_(path, argv, env));
}

CALLMON_EXPORT int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

CALLMON_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  resolve_real_functions();
  if (!g_proc.dir[0]) return g_real.execvpe_(file, argv, envp);
  before_exec(file);
  WITH_RECORDING_ENV(envp, env);
  return after_failed_exec(g_real.execvpe_(file, argv, env));
}

CALLMON_EXPORT int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

CALLMON_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  resolve_real_functions();
  if (!g_proc.dir[0]) return g_real.fexecve_(fd, argv, envp);
  before_exec("(fexecve)");
  WITH_RECORDING_ENV(envp, env);
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
