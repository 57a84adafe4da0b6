// Boost.Context's stack switches (boost::context::fiber, continuation, execution_context;
// Boost.Coroutine2, Boost.Asio's spawn, Boost.Fiber): jump_fcontext and ontop_fcontext,
// interposed so that every context keeps its own open frames, as swapcontext's interposer
// does (recording/context_stash.hpp; docs/runtime.md, "Stack switching"). Without them, in
// the modes that redirect return addresses (-pg, -pg -mfentry, sleds, --patch) a return
// in a resumed fiber met another stack's frames and the program died (SIGSEGV).
//
// Boost names a suspended context by an fcontext_t: the stack pointer its switch left
// below the switch's caller. Here the caller is this interposer, so the frames set aside
// are keyed by this interposer's frame address, which lies a fixed few dozen bytes above
// that fcontext_t; a switch to `to` brings back the context whose key is the lowest within
// kWindow above it. (Stacks of two contexts are never that close: each has its own.)
// A fiber's context made by make_fcontext that has not run has no frames: it starts on an
// empty stack. Only the library's exported functions are seen: a program that links
// Boost.Context statically into itself calls its own copy.
#include <cstdint>

#include "runtime/interposers/interpose.hpp"
#include "runtime/recording/context_stash.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Transfer {  // boost::context::detail::transfer_t
  void* fctx;
  void* data;
};
using JumpFn = Transfer (*)(void* to, void* vp);
using OntopFn = Transfer (*)(void* to, void* vp, Transfer (*fn)(Transfer));

// The switch saves 0x38 bytes below its return address and resumes 0x40 above `to`; this
// interposer's frame adds its own below. 512 bytes cover both with room.
constexpr uintptr_t kWindow = 512;

uintptr_t resume_sp(const void* to) { return reinterpret_cast<uintptr_t>(to) + 0x40; }

}  // namespace

CALLMON_EXPORT __attribute__((noinline)) Transfer jump_fcontext(void* to, void* vp) {
  resolve_real_functions(!g_real.jump_fcontext_);
  const void* me = __builtin_frame_address(0);
  context_switch(me, to, resume_sp(to), kWindow);
  Transfer t = reinterpret_cast<JumpFn>(g_real.jump_fcontext_)(to, vp);
  context_resumed(me);  // whoever switched back here
  return t;
}

CALLMON_EXPORT __attribute__((noinline)) Transfer ontop_fcontext(void* to, void* vp,
                                                                 Transfer (*fn)(Transfer)) {
  resolve_real_functions(!g_real.ontop_fcontext_);
  const void* me = __builtin_frame_address(0);
  context_switch(me, to, resume_sp(to), kWindow);
  Transfer t = reinterpret_cast<OntopFn>(g_real.ontop_fcontext_)(to, vp, fn);
  context_resumed(me);
  return t;
}
