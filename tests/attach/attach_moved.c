/* A function that moves its frame, open while `callmon record -p --patch=.` detaches
 * (tests/attach/run_attach.py, case moved; runtime/patching/entry_frame.hpp). moved_frame
 * builds its frame in memory call_moved gives it and returns from there, as libffi's
 * ffi_call_unix64 does under every call of Python's ctypes: it copies its return address
 * into that frame first. Patched by the attach, that copy would hold the runtime's exit
 * trampoline, and the detach puts back only the slot the entry redirected: its return
 * after the detach found no frame and the program died of SIGILL ("a hijacked return
 * address is missing from the shadow stack"). The attach refuses it now.
 *
 * Prints "ready", waits for "go" (sent once attached), calls call_moved, whose moved_frame
 * calls waiter: it prints "waiting" and reads "end" (sent once callmon has detached), then
 * everything returns and the result is printed; status 0. Built with no flag. */
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

long call_moved(long x);

NOINLINE long waiter(long x) {
  char line[64];
  printf("waiting\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin) || strcmp(line, "end\n") != 0) return -1;
  return x * 3;
}

__asm__(
    ".text\n"
    ".globl moved_frame\n.type moved_frame,@function\n.p2align 4\n"
    "moved_frame:\n"  /* long moved_frame(long *area, long x) */
    "  .cfi_startproc\n"
    "  movq (%rsp), %r10\n"  /* its return address, copied into the frame it builds */
    "  leaq 16(%rdi), %rax\n"
    "  movq %rbp, (%rax)\n"
    "  movq %r10, 8(%rax)\n"
    "  movq %rax, %rbp\n"
    "  .cfi_def_cfa %rbp, 16\n"
    "  .cfi_offset %rbp, -16\n"
    "  leaq 0(%rdi), %rsp\n"  /* its stack: the area, below that frame */
    "  movq %rsi, %rdi\n"
    "  call waiter\n"
    "  addq $1000, %rax\n"
    "  movq %rbp, %rsp\n"
    "  popq %rbp\n"
    "  .cfi_def_cfa %rsp, 8\n"
    "  ret\n"  /* from area + 24: not the slot the call left */
    "  .cfi_endproc\n"
    ".size moved_frame, .-moved_frame\n"
    ".globl call_moved\n.type call_moved,@function\n.p2align 4\n"
    "call_moved:\n"
    "  .cfi_startproc\n"
    "  push %rbp\n"
    "  .cfi_def_cfa_offset 16\n"
    "  .cfi_offset %rbp, -16\n"
    "  mov %rsp, %rbp\n"
    "  .cfi_def_cfa_register %rbp\n"
    "  sub $65536, %rsp\n"
    "  mov %rdi, %rsi\n"
    "  lea 32768(%rsp), %rdi\n"  /* the area: moved_frame's stack below, its frame above */
    "  call moved_frame\n"
    "  leave\n"
    "  .cfi_def_cfa %rsp, 8\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size call_moved, .-call_moved\n");

int main(void) {
  char line[64];
  printf("ready\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin) || strcmp(line, "go\n") != 0) return 2;
  printf("%ld\n", call_moved(14));
  return 0;
}
