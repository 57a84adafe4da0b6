/* zmm16-31 and the opmask registers across the probes' per-call slow paths (docs/patching.md,
 * "Vector registers"): a record-time filter (tail calls included), the monotonic clock and
 * a monitor send every call through callmon_slow_call_hot or (a monitor's callbacks are the
 * program's code) callmon_slow_call; the first keeps only the upper halves of ymm/zmm0-15,
 * so what runs behind it must leave zmm16-31 and k0-7 alone. The caller here keeps patterns
 * in zmm16, zmm17, zmm31 and k1-k7 across calls of `leaf` and of `tailer`, which tail-calls
 * `leaf` (written in asm so that no compiler choice decides the registers or the jump),
 * as code built with -fipa-ra may. Built with -pg -mfentry (run_hot_zmm.py); needs
 * AVX-512F. Prints how many calls kept all of them; `argv[1]`: the number of rounds. */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

#define AVX512 __attribute__((target("avx512f")))

volatile int sink;

/* Integer code. */
COUNTED __attribute__((used)) int leaf(int x) {
  sink = x;
  return x + 1;
}

COUNTED __attribute__((used)) int skipped(int x) {
  sink = x;
  return x - 1;
}

/* A -pg -mfentry function whose body is a tail call: its return slot is already the exit
 * trampoline's when `leaf` enters (the tail-call path: a slow path under a filter). */
int tailer(int x);
#ifdef HOT_ZMM_PLAIN
#define TAILER_FENTRY ""  /* built without hooks, for --patch */
#else
#define TAILER_FENTRY "  call __fentry__\n"
#endif
__asm__(
    ".text\n"
    ".globl tailer\n"
    ".type tailer, @function\n"
    "tailer:\n"
    "  .cfi_startproc\n"  /* unwind information, as compiled code has (--patch wants it) */
    TAILER_FENTRY
    "  addl $1, %edi\n"
    "  jmp leaf\n"
    "  .cfi_endproc\n"
    ".size tailer, .-tailer\n");

/* One call of `fn` from asm with the patterns in place; returns 1 when all came back. The
 * stack pointer is moved below the red zone and aligned for the call. */
NOT_INSTRUMENTED AVX512 static int call_kept(int (*fn)(int), int x) {
  unsigned eq16, eq17, eq31, bad_k;
  unsigned p16 = 0x16160000u + (unsigned)x, p17 = 0x5a5a0000u + (unsigned)x,
           p31 = 0xa5a50000u - (unsigned)x;
  __asm__ volatile(
      "vpbroadcastd %[p16], %%zmm16\n\t"
      "vpbroadcastd %[p17], %%zmm17\n\t"
      "vpbroadcastd %[p31], %%zmm31\n\t"
      "movl $0x1111, %%eax\n\t kmovw %%eax, %%k1\n\t"
      "movl $0x2222, %%eax\n\t kmovw %%eax, %%k2\n\t"
      "movl $0x3333, %%eax\n\t kmovw %%eax, %%k3\n\t"
      "movl $0x4444, %%eax\n\t kmovw %%eax, %%k4\n\t"
      "movl $0x5555, %%eax\n\t kmovw %%eax, %%k5\n\t"
      "movl $0x6666, %%eax\n\t kmovw %%eax, %%k6\n\t"
      "movl $0x7777, %%eax\n\t kmovw %%eax, %%k7\n\t"
      /* The operands first: they may be addressed from %rsp. */
      "movl %[x], %%edi\n\t"
      "movq %[fn], %%r11\n\t"
      "movq %%rsp, %%rbx\n\t"
      "subq $128, %%rsp\n\t"
      "andq $-16, %%rsp\n\t"
      "call *%%r11\n\t"
      "movq %%rbx, %%rsp\n\t"
      /* k0-7 first: the comparisons below need a mask register. */
      "xorl %[bad], %[bad]\n\t"
      "kmovw %%k1, %%eax\n\t cmpl $0x1111, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "kmovw %%k2, %%eax\n\t cmpl $0x2222, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "kmovw %%k3, %%eax\n\t cmpl $0x3333, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "kmovw %%k4, %%eax\n\t cmpl $0x4444, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "kmovw %%k5, %%eax\n\t cmpl $0x5555, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "kmovw %%k6, %%eax\n\t cmpl $0x6666, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "kmovw %%k7, %%eax\n\t cmpl $0x7777, %%eax\n\t setne %%cl\n\t orb %%cl, %b[bad]\n\t"
      "vpbroadcastd %[p16], %%zmm0\n\t"
      "vpcmpeqd %%zmm0, %%zmm16, %%k1\n\t"
      "kmovw %%k1, %[e16]\n\t"
      "vpbroadcastd %[p17], %%zmm0\n\t"
      "vpcmpeqd %%zmm0, %%zmm17, %%k1\n\t"
      "kmovw %%k1, %[e17]\n\t"
      "vpbroadcastd %[p31], %%zmm0\n\t"
      "vpcmpeqd %%zmm0, %%zmm31, %%k1\n\t"
      "kmovw %%k1, %[e31]\n\t"
      "vzeroupper"
      : [e16] "=&r"(eq16), [e17] "=&r"(eq17), [e31] "=&r"(eq31), [bad] "=&r"(bad_k)
      : [p16] "m"(p16), [p17] "m"(p17), [p31] "m"(p31), [x] "m"(x), [fn] "m"(fn)
      : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1",
        "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm31", "k1", "k2", "k3", "k4",
        "k5", "k6", "k7", "memory", "cc");
  return eq16 == 0xffff && eq17 == 0xffff && eq31 == 0xffff && (bad_k & 0xff) == 0;
}

NOT_INSTRUMENTED int main(int argc, char** argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 1000;
  long kept = 0, calls = 0;
  for (long i = 0; i < rounds; ++i) {
    kept += call_kept(leaf, (int)(i & 0xff));
    kept += call_kept(tailer, (int)(i & 0xff));
    kept += call_kept(skipped, (int)(i & 0xff));
    calls += 3;
  }
  printf("zmm16 zmm17 zmm31 k1-k7 kept across %ld of %ld calls\n", kept, calls);
  return 0;
}
