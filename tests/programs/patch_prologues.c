/* Entry patching (`record --patch`, docs/patching.md) meets first instructions it has to
 * move with care, written in assembly so that no compiler choice changes them:
 * - RIP-relative first instructions: `lea x(%rip)`, `mov x(%rip)`, `cmpb $0, x(%rip)` (an
 *   immediate after the displacement), a `jcc rel8` among the moved bytes, a `call` as the
 *   last moved instruction (its return address pushed by hand), a 2-byte function
 *   followed by padding;
 * - a loop back into the first bytes (`loop_entry`): refused, with its reason in `info`;
 * - a jump from another function (`jumper`) to the second instruction of `jumped_into`:
 *   refused too (the module-wide sweep for branch targets), with its reason;
 * - a function without unwind information (`no_cfi`, no .cfi directives) in a module that
 *   has it: refused, as code no compiler made as a function (V8's builtins are such code,
 *   copied at run time with whatever the patch wrote). The others carry CFI, as the
 *   assembly of libraries does;
 * - a function that builds its frame in memory its caller gave and returns from there
 *   (`moved_frame`, as libffi's ffi_call_unix64 under every ctypes call; `call_moved`
 *   gives the memory and restores its stack pointer from its frame pointer, as
 *   ffi_call_int does), not from the slot the trampoline knows: recorded, its return found
 *   by its trampoline's return point.
 * Each function is called twice; the results show the moved code computes what the
 * original does. Built with no instrumentation flag (patch mode only). */
#include <stdio.h>

#include "moved_frame.h"

long counter = 40;
char flag = 0;
long rip_lea(void);
long rip_mov(void);
long rip_cmpb(void);
long jcc_entry(long);
long call_entry(long);
long short_ret(void);
long loop_entry(long);
long jumped_into(long);
long jumper(long);
long no_cfi(long);
long call_moved(long x);
long helper(long x) { return x * 3; }

__asm__(
    ".text\n"
    ".globl rip_lea\n.type rip_lea,@function\n.p2align 4\n"
    "rip_lea:\n"
    "  .cfi_startproc\n"
    "  lea counter(%rip), %rax\n"  /* 7 bytes: all of the moved bytes */
    "  addq $1, (%rax)\n"
    "  mov (%rax), %rax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size rip_lea, .-rip_lea\n"
    ".globl rip_mov\n.type rip_mov,@function\n.p2align 4\n"
    "rip_mov:\n"
    "  .cfi_startproc\n"
    "  mov counter(%rip), %rax\n"
    "  add $100, %rax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size rip_mov, .-rip_mov\n"
    ".globl rip_cmpb\n.type rip_cmpb,@function\n.p2align 4\n"
    "rip_cmpb:\n"
    "  .cfi_startproc\n"
    "  cmpb $0, flag(%rip)\n"  /* 7 bytes, the immediate after the displacement */
    "  je 1f\n"
    "  mov $1, %eax\n"
    "  ret\n"
    "1:\n"
    "  mov $2, %eax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size rip_cmpb, .-rip_cmpb\n"
    ".globl jcc_entry\n.type jcc_entry,@function\n.p2align 4\n"
    "jcc_entry:\n"
    "  .cfi_startproc\n"
    "  test %rdi, %rdi\n"  /* 3 bytes */
    "  je 2f\n"            /* jcc rel8: among the moved bytes, re-encoded rel32 */
    "  lea 5(%rdi), %rax\n"
    "  ret\n"
    "2:\n"
    "  mov $-1, %rax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size jcc_entry, .-jcc_entry\n"
    ".globl call_entry\n.type call_entry,@function\n.p2align 4\n"
    "call_entry:\n"
    "  .cfi_startproc\n"
    "  push %rbx\n"       /* 1 byte, then the call: the last moved instruction */
    "  .cfi_adjust_cfa_offset 8\n"
    "  call helper\n"
    "  pop %rbx\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  add $1, %rax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size call_entry, .-call_entry\n"
    ".globl short_ret\n.type short_ret,@function\n.p2align 4\n"
    "short_ret:\n"
    "  .cfi_startproc\n"
    "  xor %eax, %eax\n"  /* 3 bytes in all: the jump takes the padding after it */
    "  ret\n"
    "  .cfi_endproc\n"
    ".size short_ret, .-short_ret\n"
    "  .p2align 4\n"
    ".globl loop_entry\n.type loop_entry,@function\n.p2align 4\n"
    "loop_entry:\n"
    "  .cfi_startproc\n"
    "  xor %eax, %eax\n"  /* 2 bytes; the loop comes back to byte 2: refused */
    "3:\n"
    "  add $1, %rax\n"
    "  cmp %rdi, %rax\n"
    "  jl 3b\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size loop_entry, .-loop_entry\n"
    ".globl jumped_into\n.type jumped_into,@function\n.p2align 4\n"
    "jumped_into:\n"
    "  .cfi_startproc\n"
    "  xor %eax, %eax\n"  /* 2 bytes; `jumper` jumps to byte 2: refused */
    ".Ljumped_into_2:\n"
    "  add %rdi, %rax\n"
    "  add $3, %rax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size jumped_into, .-jumped_into\n"
    ".globl jumper\n.type jumper,@function\n.p2align 4\n"
    "jumper:\n"
    "  .cfi_startproc\n"
    "  mov $100, %eax\n"  /* 5 bytes, then a tail jump into jumped_into's middle */
    "  jmp .Ljumped_into_2\n"
    "  .cfi_endproc\n"
    ".size jumper, .-jumper\n"
    ".globl no_cfi\n.type no_cfi,@function\n.p2align 4\n"
    "no_cfi:\n"          /* no unwind information: no compiler made it a function */
    "  lea 9(%rdi), %rax\n"
    "  ret\n"
    ".size no_cfi, .-no_cfi\n");
MOVED_FRAME_ASM(helper);

int main(void) {
  for (int i = 0; i < 2; ++i) {
    long a = rip_lea();
    long b = rip_mov();
    flag = (char)i;
    long c = rip_cmpb();
    long d = jcc_entry(i);
    long e = call_entry(i + 1);
    long f = short_ret();
    long g = loop_entry(7);
    long h = jumped_into(i) + jumper(i);
    long k = no_cfi(i);
    long m = call_moved(i + 1);
    printf("%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld\n", a, b, c, d, e, f, g, h, k, m);
  }
  return 0;
}
