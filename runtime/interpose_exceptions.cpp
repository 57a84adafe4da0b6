// C++ exceptions and longjmp: interposed so the frames they abandon get their exits.
//
// Exceptions: every throw reaches libgcc's _Unwind_RaiseException (rethrow:
// _Unwind_Resume_or_Rethrow; thread cancellation: _Unwind_ForcedUnwind); every handler
// starts with __cxa_begin_catch, called from the catching frame. GCC's instrumentation
// calls the exit hook from each frame's cleanup while unwinding; clang's does not, so at the
// catch the frames deeper than the catcher are closed here.
//
// longjmp: glibc stores the target stack pointer in the jmp_buf mangled with the thread's
// pointer guard (PTR_MANGLE: xor with %fs:0x30, rotate left by 17). We undo it to learn how
// far up the stack the jump goes and close the frames below the target.
#include <setjmp.h>

#include <cstdint>

#include "runtime/hooks.hpp"
#include "runtime/interpose.hpp"

using namespace callmon::rt;
using callmon::format::UnwindReason;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))
#define FRAME_SP() reinterpret_cast<uintptr_t>(__builtin_frame_address(0))

CALLMON_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(_Unwind_Exception* e) {
  note_throw();
  resolve_real_functions(!g_real.raise_exception);
  return g_real.raise_exception(e);
}

CALLMON_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(_Unwind_Exception* e) {
  note_throw();
  resolve_real_functions(!g_real.resume_or_rethrow);
  return g_real.resume_or_rethrow(e);
}

CALLMON_EXPORT _Unwind_Reason_Code _Unwind_ForcedUnwind(_Unwind_Exception* e,
                                                      _Unwind_Stop_Fn stop, void* arg) {
  note_throw();
  resolve_real_functions(!g_real.forced_unwind);
  return g_real.forced_unwind(e, stop, arg);
}

CALLMON_EXPORT void* __cxa_begin_catch(void* exc) noexcept {
  note_catch(FRAME_SP());
  resolve_real_functions(!g_real.begin_catch);
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
