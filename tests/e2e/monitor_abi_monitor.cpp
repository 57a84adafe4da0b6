// A monitor whose callbacks clobber every register a call may clobber by the ABI (rax rcx
// rdx rsi rdi r8-r11; ymm0-15 whole, upper halves left dirty; zmm16-31 and k1-k7 where the
// processor has AVX-512F) and count what they see: at exit, one line on stderr
// "monitor: N enters N exits K not normal" (run_monitor_abi.py). The program must behave
// exactly as without it (docs/runtime.md, "Monitor mode and the vector state").
#include <cstdio>

#include "callmon/monitor.hpp"

namespace {

long g_enters, g_exits, g_other;

__attribute__((target("avx2"))) void clobber_avx() {
  __asm__ volatile(
      "vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t vpcmpeqd %%ymm1, %%ymm1, %%ymm1\n\t"
      "vpcmpeqd %%ymm2, %%ymm2, %%ymm2\n\t vpcmpeqd %%ymm3, %%ymm3, %%ymm3\n\t"
      "vpcmpeqd %%ymm4, %%ymm4, %%ymm4\n\t vpcmpeqd %%ymm5, %%ymm5, %%ymm5\n\t"
      "vpcmpeqd %%ymm6, %%ymm6, %%ymm6\n\t vpcmpeqd %%ymm7, %%ymm7, %%ymm7\n\t"
      "vpcmpeqd %%ymm8, %%ymm8, %%ymm8\n\t vpcmpeqd %%ymm9, %%ymm9, %%ymm9\n\t"
      "vpcmpeqd %%ymm10, %%ymm10, %%ymm10\n\t vpcmpeqd %%ymm11, %%ymm11, %%ymm11\n\t"
      "vpcmpeqd %%ymm12, %%ymm12, %%ymm12\n\t vpcmpeqd %%ymm13, %%ymm13, %%ymm13\n\t"
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t vpcmpeqd %%ymm15, %%ymm15, %%ymm15\n\t"
      "movq $-1, %%rax\n\t movq $-1, %%rcx\n\t movq $-1, %%rdx\n\t movq $-1, %%rsi\n\t"
      "movq $-1, %%rdi\n\t movq $-1, %%r8\n\t movq $-1, %%r9\n\t movq $-1, %%r10\n\t"
      "movq $-1, %%r11" ::
          : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2",
            "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
            "xmm13", "xmm14", "xmm15");
}

__attribute__((target("avx512f"))) void clobber_avx512() {
  __asm__ volatile(
      "vpternlogd $0xff, %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpternlogd $0xff, %%zmm17, %%zmm17, %%zmm17\n\t"
      "vpternlogd $0xff, %%zmm24, %%zmm24, %%zmm24\n\t"
      "vpternlogd $0xff, %%zmm31, %%zmm31, %%zmm31\n\t"
      "kxnorw %%k0, %%k0, %%k1\n\t kxnorw %%k0, %%k0, %%k2\n\t kxnorw %%k0, %%k0, %%k3\n\t"
      "kxnorw %%k0, %%k0, %%k4\n\t kxnorw %%k0, %%k0, %%k5\n\t kxnorw %%k0, %%k0, %%k6\n\t"
      "kxnorw %%k0, %%k0, %%k7" ::
          : "xmm16", "xmm17", "xmm24", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7");
}

void clobber() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) clobber_avx512();
  clobber_avx();
}

class ClobberAll : public callmon::Monitor {
 public:
  void on_enter(callmon::ThreadInfo&, const callmon::CallInfo&) noexcept override {
    ++g_enters;
    clobber();
  }
  void on_exit(callmon::ThreadInfo&, const callmon::CallInfo&,
               callmon::ExitKind how) noexcept override {
    ++g_exits;
    if (how != callmon::ExitKind::kNormal) ++g_other;
    clobber();
  }
  void on_process_exit() noexcept override {
    std::fprintf(stderr, "monitor: %ld enters %ld exits %ld not normal\n", g_enters, g_exits,
                 g_other);
  }
};

}  // namespace

CALLMON_MONITOR(ClobberAll)
