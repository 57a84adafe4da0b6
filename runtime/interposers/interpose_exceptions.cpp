// C++ exceptions and longjmp: interposed so the frames they abandon get their exits.
//
// Exceptions: every throw reaches libgcc's _Unwind_RaiseException (rethrow:
// _Unwind_Resume_or_Rethrow; thread cancellation: _Unwind_ForcedUnwind); every handler
// starts with __cxa_begin_catch, called from the catching frame; every landing pad (a
// handler or a cleanup running destructors) is installed after a _Unwind_SetIP, and every
// cleanup ends in _Unwind_Resume. GCC's instrumentation
// calls the exit hook from each frame's cleanup while unwinding; clang's does not, so at the
// catch the frames deeper than the catcher are closed here.
//
// longjmp: glibc stores the target stack pointer in the jmp_buf mangled with the thread's
// pointer guard (PTR_MANGLE: xor with %fs:0x30, rotate left by 17). We undo it to learn how
// far up the stack the jump goes and close the frames below the target.
#include <setjmp.h>

#include <cstdint>

#include "runtime/hooks/hooks.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/signal_contexts.hpp"

using namespace callmon::rt;
using callmon::format::UnwindReason;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))
#define FRAME_SP() reinterpret_cast<uintptr_t>(__builtin_frame_address(0))

namespace {

// The Itanium C++ ABI's per-thread exception globals (its layout is part of the ABI).
struct CxaEhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

// C++ exceptions thrown and not yet caught on this thread (std::uncaught_exceptions()):
// __cxa_throw and __cxa_rethrow count theirs before they reach the unwinder,
// __cxa_begin_catch takes it back after the runtime has seen the catch. 0 where
// libstdc++ is not loaded.
unsigned in_flight() {
  if (!g_real.cxa_get_globals) resolve_real_functions(true);
  if (!g_real.cxa_get_globals) return 0;
  auto* g = static_cast<const CxaEhGlobals*>(g_real.cxa_get_globals());
  return g ? g->uncaught_exceptions : 0;
}

}  // namespace

CALLMON_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(_Unwind_Exception* e) {
  note_throw(in_flight());
  resolve_real_functions(!g_real.raise_exception);
  return g_real.raise_exception(e);
}

CALLMON_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(_Unwind_Exception* e) {
  note_throw(in_flight());
  resolve_real_functions(!g_real.resume_or_rethrow);
  return g_real.resume_or_rethrow(e);
}

// pthread_exit and thread cancellation (glibc reaches this through its own pointer too:
// interpose_unwind_link.cpp). The unwind never returns into what a running signal handler
// interrupted: a hook it interrupted never finishes, and its busy count would make the
// calls of the cleanups that run during the unwind, and of the thread's TLS and key
// destructors after it, nested records (lost past the chunk's margin). It goes first, as
// for exit (signal_contexts_exit).
CALLMON_EXPORT _Unwind_Reason_Code _Unwind_ForcedUnwind(_Unwind_Exception* e,
                                                      _Unwind_Stop_Fn stop, void* arg) {
  signal_contexts_exit();
  note_throw(in_flight());
  resolve_real_functions(!g_real.forced_unwind);
  return g_real.forced_unwind(e, stop, arg);
}

// The personality routine (C++'s __gxx_personality_v0, C's __gcc_personality_v0) calls
// _Unwind_SetIP in phase 2 just before the unwinder jumps to a landing pad, with the
// context of the frame that owns it. What _Unwind_GetCFA returns for that context is not
// the frame's own CFA but the one of the frame it called, that is the landing pad frame's
// stack pointer at the call the exception came out of (libgcc computes a frame's CFA only
// when it steps to the caller; LLVM's libunwind returns the frame's stack pointer): the
// same place as __cxa_begin_catch's frame address plus 16. Not _Unwind_GetGR(ctx, rsp):
// libgcc keeps that register of a computed context in a variable of a function that has
// returned by then (reading it crashed).
// resolve_real_functions only when something is missing: it calls dlsym for every pointer
// still null (in a C program __cxa_get_globals stays null), and a landing pad may run in a
// signal handler.
CALLMON_EXPORT void _Unwind_SetIP(_Unwind_Context* ctx, _Unwind_Ptr ip) {
  if (!g_real.set_ip || !g_real.get_cfa) {
    resolve_real_functions(true);
  }
  if (g_real.get_cfa) note_landing(static_cast<uintptr_t>(g_real.get_cfa(ctx)) - 16);
  g_real.set_ip(ctx, ip);
}

// Called at the end of every cleanup landing pad (destructors, __attribute__((cleanup)),
// GCC's exit-hook cleanups of -finstrument-functions).
CALLMON_EXPORT __attribute__((noreturn)) void _Unwind_Resume(_Unwind_Exception* e) {
  note_resume();
  if (!g_real.resume) {
    resolve_real_functions(true);
  }
  g_real.resume(e);
  __builtin_unreachable();
}


CALLMON_EXPORT void* __cxa_begin_catch(void* exc) noexcept {
  if (!g_real.begin_catch) {
    resolve_real_functions(true);
  }
  note_catch(FRAME_SP(), in_flight());
  return g_real.begin_catch(exc);
}

namespace {

constexpr int kJmpBufRsp = 6;  // glibc x86-64 __jmp_buf: rbx rbp r12 r13 r14 r15 rsp pc

uintptr_t jmpbuf_target_sp(__jmp_buf_tag* env) {
  uintptr_t guard;
  asm("mov %%fs:0x30, %0" : "=r"(guard));
  uintptr_t v = static_cast<uintptr_t>(env->__jmpbuf[kJmpBufRsp]);
  v = (v >> 17) | (v << 47);  // rotate right by 17
  return v ^ guard;
}

// Closes the frames a jump to `env` abandons. The target is the setjmp caller's stack
// pointer; its own frame address (what the hooks recorded) is that minus 16. Only a jump
// up the same stack is trusted: anything else (a coroutine switch, an alternate signal
// stack) is left to the exit hooks' matching.
void before_longjmp(__jmp_buf_tag* env) {
  uintptr_t target = jmpbuf_target_sp(env);
  signal_contexts_leave(target);  // out of a signal handler: what it interrupted is abandoned
  uintptr_t here = FRAME_SP();
  if (target > here && target - here < (uintptr_t{1} << 30))
    unwind_below(target - 16, UnwindReason::kLongjmp);
}

}  // namespace

CALLMON_EXPORT __attribute__((noreturn)) void longjmp(__jmp_buf_tag env[1], int val) {
  before_longjmp(env);
  resolve_real_functions(!g_real.longjmp_);
  g_real.longjmp_(env, val);
  __builtin_unreachable();
}

CALLMON_EXPORT __attribute__((noreturn)) void _longjmp(__jmp_buf_tag env[1], int val) {
  before_longjmp(env);
  resolve_real_functions(!g_real.under_longjmp);
  g_real.under_longjmp(env, val);
  __builtin_unreachable();
}

CALLMON_EXPORT __attribute__((noreturn)) void siglongjmp(__jmp_buf_tag env[1], int val) {
  before_longjmp(env);
  resolve_real_functions(!g_real.siglongjmp_);
  g_real.siglongjmp_(env, val);
  __builtin_unreachable();
}

CALLMON_EXPORT __attribute__((noreturn)) void __longjmp_chk(__jmp_buf_tag env[1], int val) {
  before_longjmp(env);
  resolve_real_functions(!g_real.longjmp_chk);
  g_real.longjmp_chk(env, val);
  __builtin_unreachable();
}
