// Moving a function's first instructions into its trampoline (docs/patching.md, "Entry
// patching"): the bytes a `jmp rel32` at the patch point overwrites are decoded
// (entry_decode.hpp) and re-encoded to run at the trampoline: RIP-relative displacements
// adjusted, rel8/rel32 branches made rel32 to the same targets, a final call turned into a
// push of its original return address and a jump; then a jump back to the first byte not
// moved. Pure functions on byte strings: tested without a process to patch
// (tests/unit/entry_reloc_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

// The jump written at the patch point.
inline constexpr size_t kPatchJmpLen = 5;
// Room for one function's moved instructions, jump back and data.
inline constexpr size_t kRelocMax = 96;

struct Relocated {
  uint8_t code[kRelocMax];
  size_t len = 0;        // bytes of `code` used
  size_t displaced = 0;  // bytes taken from the function (>= kPatchJmpLen)
  // Where each moved instruction after the first starts, in the function and in `code`,
  // and `displaced` with the copy's jump back when it has one: attach moves a thread
  // stopped there into the copy (docs/patching.md, "Attaching").
  uint8_t bound_from[8] = {}, bound_to[8] = {};
  uint8_t bounds = 0;
};

// Relocates the instructions at `code` (running at `from`; `avail` bytes of the function
// from there, its symbol's size minus what lies before `from`) to run at `to`. `pad`: bytes
// of padding after the function that belong to no function, which the jump may overwrite
// when the whole function is shorter than it and ends in a return or a jump. Returns
// nullptr on success, else why the function cannot be patched (a static string), for
// `info`.
const char* entry_relocate(const uint8_t* code, size_t avail, uintptr_t from, uintptr_t to,
                           Relocated* out, size_t pad = 0);

// Scans the function body [fn, fn + size) (linear sweep) for a relative branch or call
// whose target lies in [lo, hi): a jump into bytes the patch replaces. A call of `fn`
// itself (recursion) does not count. Returns the address of the first such branch, or 0.
uintptr_t entry_branch_into(const uint8_t* body, size_t size, uintptr_t fn, uintptr_t lo,
                            uintptr_t hi);

}  // namespace callmon::rt
