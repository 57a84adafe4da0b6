// The definition an interposer passes a call on to, looked up the first time it is needed
// (interpose_exit.cpp, interpose_setuid.cpp): for interposers the library's constructor does
// not resolve in g_real (interpose.hpp), because their first call may come before it.
#pragma once

#include <dlfcn.h>

#include "runtime/core/runtime_scope.hpp"

namespace callmon::rt {

// The next definition of `name` after the runtime's, kept in `slot` (acquire/release: any
// thread may look it up first). dlsym is not async-signal-safe: resolve the slot at
// start-up where a signal handler may call the interposer.
template <class Fn>
Fn next_function(Fn& slot, const char* name) {
  Fn f = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (!f) {
    RuntimeScope rs;
    f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    __atomic_store_n(&slot, f, __ATOMIC_RELEASE);
  }
  return f;
}

}  // namespace callmon::rt
