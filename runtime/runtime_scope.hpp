// The runtime's own work, told apart from the program's: while a thread runs code of
// callmon's (set-up, dlsym in an interposer, the fork and exec wrappers, rescans, chunk
// switches), a function the program interposes and instruments (its own malloc, memcpy,
// strlen, pthread functions) may be called on the runtime's behalf. Its hooks must neither
// record nor count it (docs/runtime.md, "The runtime's own calls").
#pragma once

#include <cstdint>

#include "runtime/thread_state.hpp"

namespace callmon::rt {

// Depth of RuntimeScopes on this thread. initial-exec TLS: readable from the earliest hook,
// with no call into the loader (a TLS access through __tls_get_addr could itself allocate).
extern __thread uint32_t t_runtime_depth __attribute__((tls_model("initial-exec")));

// Any hook reached while this is true returns at once (hooks.cpp, hooks_pg.cpp).
inline bool in_runtime() { return t_runtime_depth != 0; }

// Marks the scope as the runtime's work. With a thread state, also sets kGuardRuntime so that
// the hooks' fast paths (which test only `guard`) go to the slow path, where in_runtime() is
// checked. One instruction per update: a signal handler on this thread sees it whole.
class RuntimeScope {
 public:
  RuntimeScope() {
    t_runtime_depth += 1;
    if (ThreadState* s = t_state)
      asm volatile("orl %1, %0" : "+m"(s->guard) : "ir"(kGuardRuntime) : "memory");
  }
  ~RuntimeScope() {
    t_runtime_depth -= 1;
    // thread_setup may have created the state inside the scope; clearing a bit it never
    // set is harmless.
    ThreadState* s = t_state;
    if (s && t_runtime_depth == 0)
      asm volatile("andl %1, %0" : "+m"(s->guard) : "ir"(~kGuardRuntime) : "memory");
  }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;
};

}  // namespace callmon::rt
