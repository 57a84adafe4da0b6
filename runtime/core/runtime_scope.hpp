// The runtime's own work, told apart from the program's: while a thread runs code of
// callmon's (set-up, dlsym in an interposer, the fork and exec wrappers' bookkeeping, rescans,
// chunk switches), a function the program interposes and instruments (its own malloc,
// pthread functions; the string and memory functions the runtime keeps private copies of,
// libc_private.cpp) may be called on the runtime's behalf. Its hooks must neither record
// nor count it (docs/runtime.md, "The runtime's own calls").
#pragma once

#include <pthread.h>

#include <cstdint>

#include "runtime/core/sys.hpp"
#include "runtime/core/test_signal.hpp"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// Depth of RuntimeScopes on this thread, and the signal mask the outermost one replaced.
// initial-exec TLS: readable from the earliest hook, with no call into the loader (a TLS
// access through __tls_get_addr could itself allocate).
extern __thread uint32_t t_runtime_depth __attribute__((tls_model("initial-exec")));
extern __thread uint64_t t_runtime_mask __attribute__((tls_model("initial-exec")));
// The cancelability state and type the outermost scope replaced.
extern __thread int t_runtime_cancel __attribute__((tls_model("initial-exec")));
extern __thread int t_runtime_cancel_type __attribute__((tls_model("initial-exec")));

// Any hook reached while this is true returns at once (hooks.cpp, hooks_pg.cpp).
inline bool in_runtime() { return t_runtime_depth != 0; }

// Marks the scope as the runtime's work. The outermost scope blocks signals: a handler that
// ran inside it would be the program's code, but its hooks would find in_runtime() and drop
// its calls; blocked, it runs right after the scope, recorded. With a thread state, also
// sets kGuardRuntime so that the hooks' fast paths (which test only `guard`) go to the slow
// path, where in_runtime() is checked. Never held across an exec (the new image would
// inherit the mask).
class RuntimeScope {
 public:
  RuntimeScope() {
    if (t_runtime_depth == 0) {
      t_runtime_mask = SignalBlock::block_all();
      // The runtime's own open, write, fallocate, close... are cancellation points: a
      // pthread_cancel pending on the thread would act inside them and unwind through the
      // runtime's frames (std::terminate, or the program's cleanups skipped). It acts at
      // the program's next cancellation point instead, as it would without callmon.
      // Deferred too, for the way back (below).
      pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &t_runtime_cancel);
      pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &t_runtime_cancel_type);
    }
    t_runtime_depth += 1;
    if (ThreadState* s = t_state)
      asm volatile("orl %1, %0" : "+m"(s->guard) : "ir"(kGuardRuntime) : "memory");
  }
  ~RuntimeScope() {
    // thread_setup may have created the state inside the scope; clearing a bit it never
    // set is harmless.
    ThreadState* s = t_state;
    if (t_runtime_depth == 1) {
      if (s) asm volatile("andl %1, %0" : "+m"(s->guard) : "ir"(~kGuardRuntime) : "memory");
      t_runtime_depth = 0;
      // State, then type: a thread of asynchronous type cancelled meanwhile is cancelled
      // by the second call. glibc 2.36's pthread_setcancelstate would act on it too, but
      // without setting the thread's result: pthread_join then saw NULL, not
      // PTHREAD_CANCELED (pthread_setcanceltype sets it).
      pthread_setcancelstate(t_runtime_cancel, nullptr);
      pthread_setcanceltype(t_runtime_cancel_type, nullptr);
      // Tests only (test_signal.hpp): a signal for the hook this scope runs in.
      if (s && (s->guard & kGuardBusyMask)) [[unlikely]]
        if (int sig = test_hook_signal()) test_hook_signal_send(sig);
      SignalBlock::restore(t_runtime_mask);
    } else {
      t_runtime_depth -= 1;
    }
  }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;
};

// Lifts the enclosing RuntimeScopes for a stretch of code whose hooks must run as a
// program's: the calibration's probes (calibration.cpp), run on a scratch thread state with
// signals blocked. Does not touch the signal mask or the guard bits.
class RuntimeScopeSuspend {
 public:
  RuntimeScopeSuspend() : depth_(t_runtime_depth) { t_runtime_depth = 0; }
  ~RuntimeScopeSuspend() { end(); }
  void end() {
    if (!ended_) t_runtime_depth = depth_;
    ended_ = true;
  }
  RuntimeScopeSuspend(const RuntimeScopeSuspend&) = delete;
  RuntimeScopeSuspend& operator=(const RuntimeScopeSuspend&) = delete;

 private:
  uint32_t depth_;
  bool ended_ = false;
};

}  // namespace callmon::rt
