// ucontext stack switches: swapcontext and setcontext, interposed so that every context
// keeps its own open frames (recording/context_stash.hpp; docs/runtime.md, "Stack
// switching (ucontext)"). getcontext and makecontext switch nothing and are left alone
// (an interposer of getcontext would save a context inside its own frame, gone once it
// returns). The real functions are found once at start-up: a coroutine may switch from a
// signal handler, where dlsym is not safe.
#include <dlfcn.h>
#include <ucontext.h>

#include <cstdint>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/recording/context_stash.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

int (*g_swapcontext)(ucontext_t*, const ucontext_t*);
int (*g_setcontext)(const ucontext_t*);

void resolve_context_functions() {
  RuntimeScope rs;  // dlsym may call the program's malloc
  if (!g_swapcontext)
    g_swapcontext = reinterpret_cast<int (*)(ucontext_t*, const ucontext_t*)>(
        dlsym(RTLD_NEXT, "swapcontext"));
  if (!g_setcontext)
    g_setcontext = reinterpret_cast<int (*)(const ucontext_t*)>(dlsym(RTLD_NEXT, "setcontext"));
}

// After the runtime's own start-up (priority 101, lifecycle.cpp), before the program's
// constructors.
__attribute__((constructor(102))) void context_init() { resolve_context_functions(); }

uintptr_t resume_sp(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
}

}  // namespace

CALLMON_EXPORT int swapcontext(ucontext_t* out, const ucontext_t* in) {
  if (!g_swapcontext) resolve_context_functions();
  context_switch(out, in, resume_sp(in));
  int r = g_swapcontext(out, in);
  // Resumed (or failed): `out` runs again, whoever switched to it.
  context_resumed(out);
  return r;
}

CALLMON_EXPORT int setcontext(const ucontext_t* in) {
  if (!g_setcontext) resolve_context_functions();
  context_switch(nullptr, in, resume_sp(in));
  return g_setcontext(in);
}
