// Where other code jumps to, for entry patching (docs/patching.md, "Entry patching"): a
// function whose first bytes are the target of a direct jmp, jcc or call from anywhere in
// its module (another function's tail jump, a block compilers merged, a hand-written
// assembly label) cannot take the 5-byte jump there: the branch would land inside it. One
// linear sweep over the module's functions (their symbol or FDE ranges) decodes every
// instruction and marks each direct branch target in a bitmap over the module's code; the
// patcher then asks about each function's displaced bytes. Indirect branches (jump tables,
// computed gotos, function pointers) are not seen: their targets are not in the code bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/patching/entry_funcs.hpp"
#include "runtime/patching/sled_elf.hpp"

namespace callmon::rt {

class BranchTargets {
 public:
  BranchTargets() = default;
  ~BranchTargets();
  BranchTargets(const BranchTargets&) = delete;
  BranchTargets& operator=(const BranchTargets&) = delete;

  // Sweeps the functions `funcs` of the module `m` (each byte once: overlapping ranges are
  // decoded from where the previous one ended). False when the bitmap cannot be mapped;
  // then `hit` answers nothing. entry_decoder_error() must be null. No malloc.
  bool build(const SledModule& m, const ModuleFunctions& funcs);

  // The lowest address in [lo, hi) that a direct branch of the module targets, else 0.
  uintptr_t hit(uintptr_t lo, uintptr_t hi) const;

  // What the sweep cost: instructions decoded, bytes covered, nanoseconds of the thread's CPU
  // time (CLOCK_THREAD_CPUTIME_ID: page faults on the code included).
  uint64_t insns() const { return insns_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t nanos() const { return nanos_; }

 private:
  void mark(uintptr_t a);

  uint8_t* bits_ = nullptr;
  size_t map_size_ = 0;
  uintptr_t lo_ = 0, hi_ = 0;
  uint64_t insns_ = 0, bytes_ = 0, nanos_ = 0;
};

}  // namespace callmon::rt
