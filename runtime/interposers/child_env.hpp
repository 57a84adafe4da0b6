// The environment a program started by this one gets (exec, posix_spawn, system): the
// program's own, plus whatever of callmon's it lacks, so the child is recorded (or
// monitored) as this process is. Nothing else of it changes.
#pragma once

#include <cstddef>

namespace callmon::rt {

// Whether this process passes callmon's variables on: it started with CALLMON_DIR or
// CALLMON_MONITOR (the start-up environment, whatever the program did to its own since).
bool child_env_wanted();

// Bytes child_env needs to build the environment of `envp`: its array of pointers and the
// strings it builds, sized from what they hold (not a fixed 16 KiB: the wrappers put it on
// the caller's stack, which may be a small thread's or a crash handler's sigaltstack).
size_t child_env_bytes(char* const envp[]);

// Builds in `buf` (child_env_bytes(envp) bytes, pointer-aligned) `envp` plus every
// CALLMON_* variable of the start-up environment that `envp` lacks (CALLMON_DIR made
// absolute), and LD_PRELOAD naming libcallmon.so first (the program's own preloads kept
// after it). An `envp` that carries CALLMON_DIR or CALLMON_MONITOR of its own (a callmon the
// program started, setting its program up) is copied unchanged. Returns the array, at the
// start of `buf`. Async-signal-safe (execve is; this must not make it less so) and safe in
// a vfork child: no allocation, no locks, no writes outside `buf`.
char** child_env(char* const envp[], void* buf);

// Up to this many bytes, CALLMON_CHILD_ENV builds the environment on the caller's stack;
// beyond (thousands of variables), in a mapping of its own.
inline constexpr size_t kChildEnvOnStack = 4096;

// A mapping for a large child environment, unmapped when the wrapper returns (an exec that
// failed; a successful one replaces the process image, or in a vfork child leaves it to the
// parent: rare, large environments only).
class ChildEnvMapping {
 public:
  ChildEnvMapping() = default;
  ChildEnvMapping(const ChildEnvMapping&) = delete;
  ChildEnvMapping& operator=(const ChildEnvMapping&) = delete;
  ~ChildEnvMapping();
  // `bytes` of memory, or null.
  void* map(size_t bytes);

 private:
  void* mem_ = nullptr;
  size_t bytes_ = 0;
};

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

// An environment for a child: `var` is `envp` with callmon's variables (child_env), on the
// caller's stack or mapped; `envp` itself when this process passes none on (or no memory).
#define CALLMON_CHILD_ENV(envp, var)                                                       \
  char* const* var = (envp);                                                               \
  ::callmon::rt::ChildEnvMapping var##_mapping;                                            \
  if (::callmon::rt::child_env_wanted()) {                                                 \
    const size_t var##_bytes = ::callmon::rt::child_env_bytes(envp);                       \
    void* var##_buf = var##_bytes <= ::callmon::rt::kChildEnvOnStack                       \
                          ? alloca(var##_bytes)                                            \
                          : var##_mapping.map(var##_bytes);                                \
    if (var##_buf) var = ::callmon::rt::child_env(envp, var##_buf);                        \
  }
