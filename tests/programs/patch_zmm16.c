/* zmm16-31 and the opmask registers through patched functions (docs/patching.md, "Vector
 * registers"): no argument travels there, but code built with no instrumentation flag may
 * keep values in any register its callee leaves alone (gcc's -fipa-ra does so for the
 * registers it knows the callee's use of), and the probes' slow paths call libc, whose EVEX
 * string functions use ymm16-31 and the opmask registers. The caller here keeps patterns in
 * zmm17, zmm31, k1 and k7 across calls of an integer function that touches none of them
 * (written in asm so that no compiler choice decides it), on a new thread whose first call
 * sets the thread up in the runtime, and often enough for the trace window to grow. Recorded
 * with `--patch=.`; needs AVX-512F (the fixture skips the test where it is missing). */
#include <pthread.h>
#include <stdio.h>

#include "fixture.h"

#define AVX512 __attribute__((target("avx512f")))

enum { kCalls = 300000 };

volatile int sink;

/* Integer code, long enough to be patched (a RIP-relative store is moved with it). */
COUNTED __attribute__((used)) int leaf(int x) {
  sink = x;
  return x + 1;
}

static long kept, calls;

/* One call of leaf from asm with the patterns in place; returns 1 when all four came back.
 * The stack pointer is moved below the red zone and aligned for the call. */
NOT_INSTRUMENTED AVX512 static int call_kept(int x) {
  unsigned got_k1, got_k7, eq17, eq31;
  unsigned pat17 = 0x5a5a0000u + (unsigned)x, pat31 = 0xa5a50000u - (unsigned)x;
  unsigned short k1 = (unsigned short)(0x1234 + x), k7 = (unsigned short)(0xfedc - x);
  __asm__ volatile(
      "vpbroadcastd %[p17], %%zmm17\n\t"
      "vpbroadcastd %[p31], %%zmm31\n\t"
      "kmovw %[k1], %%k1\n\t"
      "kmovw %[k7], %%k7\n\t"
      "movq %%rsp, %%rbx\n\t"
      "subq $128, %%rsp\n\t"
      "andq $-16, %%rsp\n\t"
      "movl %[x], %%edi\n\t"
      "call leaf\n\t"
      "movq %%rbx, %%rsp\n\t"
      "vpbroadcastd %[p17], %%zmm16\n\t"
      "vpcmpeqd %%zmm16, %%zmm17, %%k2\n\t"
      "kmovw %%k2, %[e17]\n\t"
      "vpbroadcastd %[p31], %%zmm16\n\t"
      "vpcmpeqd %%zmm16, %%zmm31, %%k2\n\t"
      "kmovw %%k2, %[e31]\n\t"
      "kmovw %%k1, %[g1]\n\t"
      "kmovw %%k7, %[g7]\n\t"
      "vzeroupper"
      : [e17] "=&r"(eq17), [e31] "=&r"(eq31), [g1] "=&r"(got_k1), [g7] "=&r"(got_k7)
      : [p17] "m"(pat17), [p31] "m"(pat31), [k1] "m"(k1), [k7] "m"(k7), [x] "m"(x)
      : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1",
        "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm31", "k1", "k2", "k7",
        "memory", "cc");
  return eq17 == 0xffff && eq31 == 0xffff && (got_k1 & 0xffff) == k1 && (got_k7 & 0xffff) == k7;
}

NOT_INSTRUMENTED static void* zmm_thread(void* arg) {
  (void)arg;
  for (int i = 0; i <= kCalls; ++i) { /* the first call is the thread's set-up */
    kept += call_kept(i & 0xff);
    calls++;
  }
  return NULL;
}

NOT_INSTRUMENTED int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, zmm_thread, NULL);
  pthread_join(t, NULL);
  printf("zmm17 zmm31 k1 k7 kept across %ld of %ld calls\n", kept, calls);
  return 0;
}
