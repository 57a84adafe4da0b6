// What the probes' slow-path wrappers (slow_call.S) save of the vector state (see
// xstate.inc): the AVX and AVX-512 components XCR0 enables, the ones checked before the
// per-call slow paths (callmon_xstate_live), whether XINUSE can be read (xgetbv with
// ecx = 1), and the size of an XSAVE area in the standard format reaching the last of those
// components. Set in a constructor of the runtime's first priority, before the program's
// constructors; until then the mask is 0 and the wrappers save nothing.
#include <cpuid.h>

#include <cstdint>

extern "C" {
__attribute__((visibility("hidden"))) uint32_t callmon_xstate_mask = 0;  // saved
__attribute__((visibility("hidden"))) uint32_t callmon_xstate_live = 0;  // checked in XINUSE
__attribute__((visibility("hidden"))) uint64_t callmon_xstate_size = 0;
__attribute__((visibility("hidden"))) uint8_t callmon_xstate_inuse = 0;
// Set by monitor mode before its first thread is monitored (monitor_dispatch.cpp): only a
// monitor's callbacks, behind callmon_slow_call_hot, can change the upper halves of
// ymm/zmm0-15 there; without it that wrapper checks nothing (slow_call.S).
__attribute__((visibility("hidden"))) uint8_t callmon_xstate_hot_on = 0;
}

namespace {

// AVX (YMM_Hi128), opmask, ZMM_Hi256, Hi16_ZMM.
constexpr uint32_t kVectorComponents = (1u << 2) | (1u << 5) | (1u << 6) | (1u << 7);

__attribute__((constructor(101))) void xstate_setup() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return;
  uint32_t lo, hi;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const uint32_t mask = lo & kVectorComponents;
  if (!(mask & (1u << 2))) return;  // no AVX: nothing beyond the xmm registers
  uint64_t size = 576;              // legacy area and header
  for (unsigned i = 2; i < 8; ++i) {
    if (!(mask & (1u << i))) continue;
    __cpuid_count(0xd, i, a, b, c, d);  // eax: size, ebx: offset in the standard format
    if (uint64_t end = uint64_t{a} + b; end > size) size = end;
  }
  __cpuid_count(0xd, 1, a, b, c, d);
  callmon_xstate_inuse = (a & (1u << 2)) ? 1 : 0;  // XGETBV with ECX = 1
  callmon_xstate_size = (size + 63) & ~uint64_t{63};
  callmon_xstate_size += 64;  // room to align the area down to 64 bytes
  callmon_xstate_live = mask & ((1u << 2) | (1u << 6));  // upper halves of ymm/zmm0-15
  callmon_xstate_mask = mask;
}

}  // namespace
