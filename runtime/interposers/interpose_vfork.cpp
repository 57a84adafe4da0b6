// vfork: the child shares the parent's memory, its thread's TLS and stack until it execs or
// _exits, so the hooks of the functions it calls in between would write into the parent's
// recording as the parent's thread: its calls counted as the parent's, and a child that
// _exits from inside a function left the parent's shadow stack a frame too deep. The
// interposer marks the thread as doing the runtime's work (runtime_scope.hpp: the hooks
// return at once, record nothing, leave return addresses alone) from just before the system
// call; the child keeps the mark in the shared memory until it execs or _exits, and the
// parent clears it when vfork returns to it: its state is as before the call
// (docs/runtime.md, "Processes").
//
// In assembly: the child returns from vfork first and may overwrite the stack below, so
// the parent's return address is kept in a register across the system call (as glibc's
// own vfork does). Signals stay blocked from the mark to the system call's return: a handler
// of the parent's runs after the mark is gone (recorded), the child's after it gave its
// mask back (not recorded, as the rest of the child).
//
// A child that leaves by exit() (not _exit) runs glibc's exit on the parent's memory: the
// exit handlers the parent's own exit would have run (the runtime's destructor among them)
// run there and are gone for the parent. The child's exit path marks it
// (note_vfork_child_exit) and the parent, back here, ties its recording's end to a path its
// exit still takes (process_finish_rearm, process.hpp).
#include <cerrno>
#include <cstdint>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/recording/process.hpp"

using namespace callmon::rt;

namespace {
// The program's signal mask, while the vfork is under way (the child reads it too).
__thread uint64_t t_vfork_mask __attribute__((tls_model("initial-exec")));
// Set by a vfork child that runs exit (on this thread's TLS, which it shares), read by the
// parent when vfork returns to it.
__thread bool t_vfork_child_exited __attribute__((tls_model("initial-exec")));
}  // namespace

namespace callmon::rt {
void note_vfork_child_exit() { t_vfork_child_exited = true; }
}  // namespace callmon::rt

// Before the system call, in the parent.
extern "C" __attribute__((visibility("hidden"), used)) void callmon_vfork_before() {
  t_vfork_mask = SignalBlock::block_all();
  t_runtime_depth += 1;
  if (ThreadState* s = t_state)
    asm volatile("orl %1, %0" : "+m"(s->guard) : "ir"(kGuardRuntime) : "memory");
}

// In the child, right after the system call: its own mask back; the mark stays.
extern "C" __attribute__((visibility("hidden"), used)) void callmon_vfork_child() {
  SignalBlock::restore(t_vfork_mask);
}

// In the parent (the child has exec'd or exited), or after a failed call: the mark gone,
// the mask back. Returns vfork's result (-1 with errno for an error).
extern "C" __attribute__((visibility("hidden"), used)) long callmon_vfork_parent(long ret) {
  if (t_vfork_child_exited) {  // still marked as the runtime's: its calls are not recorded
    t_vfork_child_exited = false;
    process_finish_rearm();
  }
  t_runtime_depth -= 1;
  if (t_runtime_depth == 0)
    if (ThreadState* s = t_state)
      asm volatile("andl %1, %0" : "+m"(s->guard) : "ir"(~kGuardRuntime) : "memory");
  SignalBlock::restore(t_vfork_mask);
  if (ret < 0 && ret > -4096) {
    errno = static_cast<int>(-ret);
    return -1;
  }
  return ret;
}

// vfork and glibc's other name for it. 58: SYS_vfork.
asm(R"(
    .text
    .globl vfork
    .type vfork, @function
    .globl __vfork
    .type __vfork, @function
    .p2align 4
vfork:
__vfork:
    .cfi_startproc
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call callmon_vfork_before
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    .cfi_register %rip, %rdi
    movl $58, %eax
    syscall
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rip, 0
    testq %rax, %rax
    jnz 1f
    pushq %rax
    .cfi_adjust_cfa_offset 8
    call callmon_vfork_child
    popq %rax
    .cfi_adjust_cfa_offset -8
    ret
1:
    movq %rax, %rdi
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call callmon_vfork_parent
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size vfork, .-vfork
    .size __vfork, .-__vfork
)");
