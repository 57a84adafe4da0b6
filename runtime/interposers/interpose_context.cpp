// ucontext stack switches: swapcontext and setcontext, interposed so that every context
// keeps its own open frames (recording/context_stash.hpp; docs/runtime.md, "Stack
// switching (ucontext)"). getcontext and makecontext switch nothing and are left alone
// (an interposer of getcontext would save a context inside its own frame, gone once it
// returns). The real functions are found at start-up with the others (g_real): a
// coroutine may switch from a signal handler, where dlsym is not safe.
#include <ucontext.h>

#include <cstdint>

#include "runtime/interposers/interpose.hpp"
#include "runtime/recording/context_stash.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

uintptr_t resume_sp(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
}

}  // namespace

CALLMON_EXPORT int swapcontext(ucontext_t* out, const ucontext_t* in) {
  resolve_real_functions(!g_real.swapcontext_);
  context_switch(out, in, resume_sp(in));
  int r = g_real.swapcontext_(out, in);
  // Resumed (or failed): `out` runs again, whoever switched to it.
  context_resumed(out);
  return r;
}

CALLMON_EXPORT int setcontext(const ucontext_t* in) {
  resolve_real_functions(!g_real.setcontext_);
  context_switch(nullptr, in, resume_sp(in));
  return g_real.setcontext_(in);
}
