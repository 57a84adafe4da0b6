// The code scan of got_refs.hpp. Linear in the code size (one pass, a binary search only
// when a window points into the slots' range).
#include "runtime/patching/got_refs.hpp"

#include <string.h>

namespace callmon::rt {

namespace {

SlotRefs* find(SlotRefs* slots, size_t count, uintptr_t at) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (slots[mid].slot < at) lo = mid + 1;
    else hi = mid;
  }
  return lo < count && slots[lo].slot == at ? &slots[lo] : nullptr;
}

}  // namespace

void got_classify_refs(uintptr_t lo, uintptr_t hi, SlotRefs* slots, size_t count) {
  if (count == 0 || hi < lo + 6) return;
  uintptr_t first = slots[0].slot, last = slots[count - 1].slot;
  static const unsigned kImm[] = {0, 1, 2, 4};
  // `at` below is base + imm, imm at most 4: one unsigned compare rejects nearly every
  // window (the slots span a few KB, the code megabytes) before the four candidates.
  const uintptr_t span = last - first + 4;
  for (uintptr_t p = lo; p + 4 <= hi; ++p) {
    int32_t disp;
    memcpy(&disp, reinterpret_cast<const void*>(p), 4);
    const uintptr_t base = p + 4 + static_cast<intptr_t>(disp);
    if (base - (first - 4) > span) continue;
    for (unsigned imm : kImm) {
      uintptr_t at = base + imm;
      if (at < first || at > last) continue;
      SlotRefs* s = find(slots, count, at);
      if (!s) continue;
      const auto* b = reinterpret_cast<const uint8_t*>(p);
      bool call = imm == 0 && p >= lo + 2 && b[-2] == 0xff && (b[-1] == 0x15 || b[-1] == 0x25);
      if (call) ++s->calls;
      else ++s->others;
    }
  }
}

}  // namespace callmon::rt
