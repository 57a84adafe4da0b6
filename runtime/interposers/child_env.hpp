// The environment a program started by this one gets (exec, posix_spawn, system): the
// program's own, plus whatever of callmon's it lacks, so the child is recorded (or
// monitored) as this process is. Nothing else of it changes.
#pragma once

#include <cstddef>

namespace callmon::rt {

// Most variables child_env adds: every CALLMON_* of the start-up environment and LD_PRELOAD.
inline constexpr size_t kChildEnvExtra = 64;
// Scratch bytes child_env may need for the strings it builds.
inline constexpr size_t kChildEnvScratch = 16384;

// Whether this process passes callmon's variables on: it started with CALLMON_DIR or
// CALLMON_MONITOR (the start-up environment, whatever the program did to its own since).
bool child_env_wanted();

// Fills `out` (room for the entries of `envp`, kChildEnvExtra more and the NULL) with
// `envp` plus every CALLMON_* variable of the start-up environment that `envp` lacks
// (CALLMON_DIR made absolute), and LD_PRELOAD naming libcallmon.so first (the program's
// own preloads kept after it). `scratch` (kChildEnvScratch bytes) holds the built strings.
// An `envp` that carries CALLMON_DIR or CALLMON_MONITOR of its own (a callmon the program
// started, setting its program up) is copied unchanged. Returns `out`. Async-signal-safe (execve is; this must not make it less so) and safe in
// a vfork child: no allocation, no locks, no writes outside `out` and `scratch`.
char** child_env(char* const envp[], char** out, char* scratch);

// Finds libcallmon.so's path ahead of the first exec (dladdr takes the loader's lock, which
// a vfork child must not). Called from the runtime's constructor.
void child_env_prepare();

// Takes callmon's variables out of the program's `environ`, so that it sees the environment
// it would have without callmon (`env` prints the same lines): every CALLMON_* entry, and
// libcallmon.so (with the library callmon put before it, CALLMON_PRELOAD_FIRST) out of
// LD_PRELOAD, which goes when nothing of the program's own is left in it. Only in a process
// that passes them on (child_env_wanted): the exec and spawn wrappers put them back in the
// environment of each program it starts, from the start-up environment. Called once from
// the runtime's constructor, after start_env_capture and child_env_prepare, while the
// program has no thread of its own. `environ` then points to a copy: the kernel's array on
// the initial stack is left whole (the auxiliary vector follows its NULL).
void hide_callmon_env();

// Entries in `envp`.
size_t env_count(char* const envp[]);

}  // namespace callmon::rt

// An environment for a child on the caller's stack: `var` is `envp` with callmon's variables
// (child_env); `envp` itself when this process passes none on.
#define CALLMON_CHILD_ENV(envp, var)                                                       \
  char* const* var = (envp);                                                               \
  if (::callmon::rt::child_env_wanted()) {                                                 \
    char** var##_out = static_cast<char**>(                                                \
        alloca((::callmon::rt::env_count(envp) + ::callmon::rt::kChildEnvExtra + 1) *      \
               sizeof(char*)));                                                            \
    char* var##_scratch = static_cast<char*>(alloca(::callmon::rt::kChildEnvScratch));     \
    var = ::callmon::rt::child_env(envp, var##_out, var##_scratch);                        \
  }
