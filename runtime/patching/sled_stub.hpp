// Stubs for sled sites out of `call rel32` reach of the entry trampoline: a PIE executable
// is mapped far (more than 2 GiB) from the shared libraries, libcallmon.so among them, so
// its patched sites call a small stub page mapped next to it, which jumps on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

// Whether `to` can be reached from `from` with a rel32 displacement (call/jmp at `from - 5`).
inline bool rel32_reaches(uintptr_t from, uintptr_t to) {
  int64_t d = static_cast<int64_t>(to - from);
  return d >= INT32_MIN && d <= INT32_MAX;
}

// Returns the address of a stub that jumps to `target` (`jmp *0(%rip)` and the address)
// and that every call site in [lo, hi) reaches with rel32; maps a new page near the range
// if no stub page made before fits. Returns 0 when no page can be mapped in reach. Not
// thread-safe: the patcher's callers serialise (sled_patch.hpp).
uintptr_t sled_stub_near(uintptr_t lo, uintptr_t hi, uintptr_t target);

// Maps `size` bytes (rounded up to pages) with `prot` where [lo, hi) and the mapping reach
// each other with rel32 both ways, below the range first (above an executable is where its
// brk heap grows), 1 MiB steps, never over an existing mapping; 0 when no place is free.
// The stub pages here, the sleds' stub pools (sled_call_stub.hpp) and entry patching's
// trampoline pools (entry_tramp.hpp) come from here.
uintptr_t map_near(uintptr_t lo, uintptr_t hi, size_t size, int prot);

// Whether `addr` is one of the stubs (a site calling it is patched already).
bool sled_is_stub(uintptr_t addr);

}  // namespace callmon::rt
