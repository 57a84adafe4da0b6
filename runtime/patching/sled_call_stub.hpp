// Per-function stubs of the nop-sled mode and of -pg -mfentry calls (fentry_sites.hpp;
// arch/x86_64/sled_call.S has their layout): a patched sled jumps to its function's stub, which calls the entry hook, then calls the
// function's body itself, so the function's `ret` comes back to the stub predicted, and the
// stub returns to the real caller with a `ret` the return stack buffer predicts too. The
// -pg modes' redirected return (hooks_pg.cpp), which the sleds used before, costs a
// mispredicted return per call (docs/modes.md, "Nop sleds").
//
// Stubs live in pools mapped within rel32 reach of their module, one pool per module and
// pass, never unmapped (a frame's slot may still hold a stub's address). A pool is writable
// only while it is filled, before any site jumps to it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

inline constexpr uintptr_t kSledStubSize = 64;
// Where a stub's function returns to (the address after its `call body`).
inline constexpr uintptr_t kSledStubReturn = 21;
inline constexpr int kMaxSledPools = 256;

// The published pools, read by the hooks: [lo, hi) holds a pool's header and the stubs
// written. `count` is raised (release) after the entry is written; readers load it with
// acquire.
struct SledPools {
  uintptr_t lo[kMaxSledPools];
  uintptr_t hi[kMaxSledPools];
  uintptr_t stride[kMaxSledPools];  // kSledStubSize, or entry patching's trampolines'
  int count;
};
extern SledPools g_sled_pools;

// Set once a site of this process jumps to a stub: the calibration measures the stubs' way
// (calibration_probe_sled.cpp).
extern bool g_sled_stubs;

// Whether `a` is the return point of a stub: the address a sled function called by its
// stub finds in its return slot. Integer code, no call: the hooks' fast paths use it.
// Entry patching's trampolines (entry_tramp.hpp) return there too: their pools are
// published here with their own stride. Every pool's first stub or trampoline is
// kSledStubSize bytes after its page-aligned start.
inline bool sled_stub_return(uintptr_t a) {
  if ((a & (kSledStubSize - 1)) != kSledStubReturn) return false;
  int n = __atomic_load_n(&g_sled_pools.count, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; ++i) {
    uintptr_t off = a - g_sled_pools.lo[i];
    if (off < g_sled_pools.hi[i] - g_sled_pools.lo[i] &&
        (g_sled_pools.stride[i] == kSledStubSize ||
         (off - kSledStubSize) % g_sled_pools.stride[i] == kSledStubReturn))
      return true;
  }
  return false;
}

// Publishes a pool of entry patching's trampolines, [lo, hi), `stride` bytes each after a
// kSledStubSize header (or, stride kSledStubSize, one 64-byte block: the library-call
// entry's, libcall_entry.S). Serialised by the patchers' lock, as the pools below; a pool is
// mapped only while sled_pools_full() is false, so there is room for it.
void sled_pools_publish(uintptr_t lo, uintptr_t hi, uintptr_t stride);
inline bool sled_pools_full() {
  return __atomic_load_n(&g_sled_pools.count, __ATOMIC_RELAXED) == kMaxSledPools;
}

// A pool being filled. open() maps room for `sites` stubs near [lo, hi) (a module's code);
// stub() writes one (0 when the pool is full); close() makes the pool executable and
// read-only. Not thread-safe: the sled pass's lock serialises them.
struct SledPool {
  uintptr_t base = 0;
  size_t size = 0;
  size_t used = 0;
};
bool sled_pool_open(SledPool* p, uintptr_t lo, uintptr_t hi, size_t sites);
// The stub of the function at `fn` whose body (the code after its sled) starts at `body`.
uintptr_t sled_pool_stub(SledPool* p, uintptr_t fn, uintptr_t body);
// False (the pool unmapped, its sites not to be written) when it holds no stub or mprotect
// refused.
bool sled_pool_close(SledPool* p);

// Whether `addr` is the first byte of a stub (a sled jumping there is patched already).
bool sled_stub_start(uintptr_t addr);

}  // namespace callmon::rt
