// Trampoline pages for entry patching (docs/patching.md, "Entry patching"): one pool per
// patched module, mapped within rel32 reach of all its code (a PIE executable lies more
// than 2 GiB from the libraries, libcallmon.so among them), so that the `jmp rel32` at each
// function's entry reaches its trampoline and the trampoline's jump back reaches the
// function. A trampoline is
//     +0   the function's own address (8 bytes: the entry probe records it)
//     +8   call *pool+0(%rip)      -> callmon_patched_entry (arch/x86_64/patch_entry.S)
//     +14  the moved instructions, then jmp back (entry_reloc.hpp)
// so after its call the stack is exactly the one `call __fentry__` as a first instruction
// leaves, and the -pg -mfentry exit (return-address hijack) applies unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

inline constexpr size_t kTrampSlot = 128;       // bytes per trampoline
inline constexpr size_t kTrampEntry = 8;        // where the function's jump lands
inline constexpr size_t kTrampCodeOffset = 14;  // where the moved instructions start

struct TrampPool {
  uint8_t* base = nullptr;  // +0: the entry trampoline's address
  size_t size = 0;
  size_t used = 0;
};

// Maps a pool for `slots` trampolines, every byte of it within rel32 reach of [lo, hi)
// (the module's code), writable until entry_pool_seal(). `entry` is the address the
// trampolines call. False when no such place can be mapped.
bool entry_pool_map(uintptr_t lo, uintptr_t hi, size_t slots, uintptr_t entry, TrampPool* out);

// The next free slot, or nullptr when the pool is full.
uint8_t* entry_pool_slot(TrampPool* pool);

// Writes the slot's head (function address and the call); the moved code goes at
// slot + kTrampCodeOffset.
void entry_pool_head(const TrampPool& pool, uint8_t* slot, uintptr_t fn);

// Makes the pool read-only and executable (unmaps it when no slot was used). False when
// mprotect refused: then nothing must jump there.
bool entry_pool_seal(TrampPool* pool);

}  // namespace callmon::rt
