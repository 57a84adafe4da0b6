// A monitor whose callbacks use zmm16-31 and every opmask register, as a monitor built with
// AVX-512 (or calling libc's EVEX string functions) may: the runtime must keep the
// program's values there around them (run_hot_zmm.py; docs/patching.md "Vector registers").
// Built by the test with the compiler's AVX-512F target; loaded only where the processor
// has it.
#include "callmon/monitor.hpp"

namespace {

__attribute__((target("avx512f"))) void clobber() {
  __asm__ volatile(
      "vpternlogd $0xff, %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpternlogd $0xff, %%zmm17, %%zmm17, %%zmm17\n\t"
      "vpternlogd $0xff, %%zmm31, %%zmm31, %%zmm31\n\t"
      "kxnorw %%k0, %%k0, %%k1\n\t kxnorw %%k0, %%k0, %%k2\n\t kxnorw %%k0, %%k0, %%k3\n\t"
      "kxnorw %%k0, %%k0, %%k4\n\t kxnorw %%k0, %%k0, %%k5\n\t kxnorw %%k0, %%k0, %%k6\n\t"
      "kxnorw %%k0, %%k0, %%k7\n\t"
      "vzeroupper" ::
          : "xmm16", "xmm17", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7");
}

class ClobberMonitor : public callmon::Monitor {
 public:
  void on_enter(callmon::ThreadInfo&, const callmon::CallInfo&) noexcept override { clobber(); }
  void on_exit(callmon::ThreadInfo&, const callmon::CallInfo&,
               callmon::ExitKind) noexcept override {
    clobber();
  }
};

}  // namespace

CALLMON_MONITOR(ClobberMonitor)
