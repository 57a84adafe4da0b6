// Which GOT slots a module's code only calls through (got_redirect.cpp): a GLOB_DAT slot
// serves both `call *f@GOTPCREL(%rip)` (-fno-plt) and `&f`; only a slot whose every
// reference in the code is a call or a jump can take a probe's address without changing
// what the program sees as the function's address.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

// One slot to classify, sorted by `slot` before got_classify_refs.
struct SlotRefs {
  uintptr_t slot;
  unsigned calls;   // `call *slot(%rip)` (ff 15) and `jmp *slot(%rip)` (ff 25)
  unsigned others;  // any other 4-byte window that could be a RIP-relative reference to it
};

// Scans the code in [lo, hi) for RIP-relative references to the slots. Every 4-byte window
// is taken as a possible displacement, followed by an immediate of 0, 1, 2 or 4 bytes, so a
// reference through any instruction is counted (in `others` unless it is ff 15 / ff 25
// with no immediate); bytes that only look like one make the count larger, never smaller.
void got_classify_refs(uintptr_t lo, uintptr_t hi, SlotRefs* slots, size_t count);

}  // namespace callmon::rt
