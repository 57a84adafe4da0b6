// Trampoline pages for entry patching (docs/patching.md, "Entry patching"): one pool per
// patched module, mapped within rel32 reach of all its code (a PIE executable lies more
// than 2 GiB from the libraries, libcallmon.so among them), so that the `jmp rel32` at each
// function's entry reaches its trampoline and the trampoline's jump back reaches the
// function. A pool starts with two addresses (callmon_patched_entry and
// callmon_patched_return_ret, arch/x86_64/patch_entry.S), padded to 64 bytes; then the
// trampolines, 192 bytes each:
//     +0   call *pool+0(%rip)      the entry probe; ZF set on return: not redirected
//     +6   je   +32                ... then the copy runs as the function's own start
//     +8   lea  8(%rsp), %rsp      the caller's return address is in the shadow stack
//     +13  nopl (%rax)
//     +16  call +32                the copy: the function returns to +21, predicted
//     +21  jmp  *pool+8(%rip)      the exit, which returns to the caller with `ret`
//     +32  the moved instructions, then jmp back (entry_reloc.hpp), at most kRelocMax bytes
//     +128 the function's own address (the entry probe records it)
// After the first call the stack is the one `call __fentry__` as a first instruction leaves,
// and the -pg -mfentry entry applies; as for the nop sleds' stubs (sled_call_stub.hpp) the
// function's return is not redirected but comes back through a call of the trampoline's
// own. The return point (+21) lies at 21 modulo 64 like a sled stub's, and the pool is
// published with them (sled_pools_publish), so the hooks tell such a slot from a caller's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

inline constexpr size_t kTrampSlot = 192;       // bytes per trampoline
inline constexpr size_t kTrampEntry = 0;        // where the function's jump lands
inline constexpr size_t kTrampCodeOffset = 32;  // where the moved instructions start
inline constexpr size_t kTrampFnOffset = 128;   // the function's address
inline constexpr size_t kTrampHead = 64;        // the pool's two addresses, padded
inline constexpr size_t kTrampDropsReturn = 13; // after the `lea`: no return address
inline constexpr size_t kTrampReturn = 21;      // the copy's return point

struct TrampPool {
  uint8_t* base = nullptr;  // +0: the entry trampoline's address
  size_t size = 0;
  size_t used = 0;
};

// Maps a pool for `slots` trampolines, every byte of it within rel32 reach of [lo, hi)
// (the module's code), writable until entry_pool_seal(). `entry` is the address the
// trampolines call, `exit` the one they jump to after the copy returned. False when no
// such place can be mapped.
bool entry_pool_map(uintptr_t lo, uintptr_t hi, size_t slots, uintptr_t entry, uintptr_t exit,
                    TrampPool* out);

// The next free slot, where a function's instructions are relocated to run (at
// slot + kTrampCodeOffset) before entry_pool_take() writes it; nullptr when the pool is full.
uint8_t* entry_pool_next(const TrampPool& pool);

// Takes the next free slot for the function at `fn`: its code before the copy, the `len`
// bytes of moved code `copy` at kTrampCodeOffset (relocated for that place), the function's
// address; int3 after. `call`: false for an attach's trampolines, which always jump to the
// copy after the entry probe (their frames' returns are redirected, as the detach expects).
// Returns the slot. entry_pool_next() must have given one.
uint8_t* entry_pool_take(TrampPool* pool, uintptr_t fn, bool call, const uint8_t* copy, size_t len);

// The function whose trampoline's return point (+21) `a` is, or 0: a --patch'ed function's
// copy returns there, so the word its `ret` popped names it even when the function moved
// its stack before returning (hooks_pg.cpp, pg_exit_slow). Slow path only: walks the pools.
uintptr_t entry_tramp_function(uintptr_t a);

// Makes the pool read-only and executable (unmaps it when no slot was used) and publishes
// it with the sled stubs' pools (sled_call_stub.hpp). False when mprotect refused: then
// nothing must jump there.
bool entry_pool_seal(TrampPool* pool);

}  // namespace callmon::rt
