// Trampoline pools near a module (see entry_tramp.hpp), mapped where the sled stubs are
// (map_near, sled_stub.hpp).
#include "runtime/patching/entry_tramp.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/patching/entry_reloc.hpp"
#include "runtime/patching/sled_call_stub.hpp"
#include "runtime/patching/sled_stub.hpp"


namespace callmon::rt {

namespace {

constexpr uintptr_t kPage = 4096;

// The layout entry_tramp.hpp describes, as the hooks and patch_entry.S read it: the return
// point (+21) where a sled stub's is (sled_stub_return), the copy and the function's address
// apart (patch_entry.S reads the address at +128 as 122 bytes after its return address).
static_assert(kTrampHead == kSledStubSize && kTrampSlot % kSledStubSize == 0);
static_assert(16 + 5 == kSledStubReturn && kTrampReturn == kSledStubReturn);
static_assert(kTrampCodeOffset + kRelocMax <= kTrampFnOffset && kTrampFnOffset + 8 <= kTrampSlot);
static_assert(kTrampEntry == 0 && kTrampFnOffset - 6 == 122);

}  // namespace

bool entry_pool_map(uintptr_t lo, uintptr_t hi, size_t slots, uintptr_t entry, uintptr_t exit,
                    TrampPool* out) {
  *out = TrampPool{};
  if (sled_pools_full()) return false;  // its trampolines' return point must be known
  size_t size = (kTrampHead + slots * kTrampSlot + kPage - 1) & ~(kPage - 1);
  uintptr_t p = map_near(lo, hi, size, PROT_READ | PROT_WRITE);
  if (!p) return false;
  out->base = reinterpret_cast<uint8_t*>(p);
  out->size = size;
  out->used = kTrampHead;
  memcpy(out->base, &entry, 8);
  memcpy(out->base + 8, &exit, 8);
  memset(out->base + 16, 0xcc, kTrampHead - 16);
  return true;
}

uint8_t* entry_pool_next(const TrampPool& pool) {
  if (!pool.base || pool.used + kTrampSlot > pool.size) return nullptr;
  return pool.base + pool.used;
}

uint8_t* entry_pool_take(TrampPool* pool, uintptr_t fn, bool call, const uint8_t* copy, size_t len) {
  uint8_t* slot = pool->base + pool->used;
  pool->used += kTrampSlot;
  memset(slot, 0xcc, kTrampSlot);  // int3 after the code: nothing runs past it
  // The disp32 at slot + at of an instruction that ends at slot + next, to `to`.
  auto put_rel = [slot](size_t at, size_t next, const void* to) {
    int32_t d = static_cast<int32_t>(reinterpret_cast<intptr_t>(to) -
                                     reinterpret_cast<intptr_t>(slot + next));
    memcpy(slot + at, &d, 4);
  };
  static const uint8_t code[kTrampCodeOffset] = {
      0xff, 0x15, 0, 0, 0, 0,        // +0  call *pool+0(%rip)
      0x74, 32 - 8,                  // +6  je +32
      0x48, 0x8d, 0x64, 0x24, 0x08,  // +8  lea 8(%rsp), %rsp
      0x0f, 0x1f, 0x00,              // +13 nopl (%rax)
      0xe8, 32 - 21, 0, 0, 0,        // +16 call +32
      0xff, 0x25, 0, 0, 0, 0,        // +21 jmp *pool+8(%rip)
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc}; // +27
  memcpy(slot, code, sizeof code);
  if (!call) slot[6] = 0xeb;  // jmp +32
  put_rel(2, 6, pool->base);
  put_rel(23, 27, pool->base + 8);
  memcpy(slot + kTrampCodeOffset, copy, len);
  memcpy(slot + kTrampFnOffset, &fn, 8);
  return slot;
}

uintptr_t entry_tramp_function(uintptr_t a) {
  if ((a & (kSledStubSize - 1)) != kSledStubReturn) return 0;
  int n = __atomic_load_n(&g_sled_pools.count, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; ++i) {
    if (g_sled_pools.stride[i] != kTrampSlot) continue;
    const uintptr_t lo = g_sled_pools.lo[i] + kTrampHead;
    if (a < lo || a >= g_sled_pools.hi[i] || (a - lo) % kTrampSlot != kTrampReturn) continue;
    uintptr_t fn;  // written before the pool was published, never changed after
    memcpy(&fn, reinterpret_cast<const void*>(a - kTrampReturn + kTrampFnOffset), 8);
    return fn;
  }
  return 0;
}

bool entry_pool_seal(TrampPool* pool) {
  if (!pool->base) return false;
  if (pool->used == kTrampHead) {
    munmap(pool->base, pool->size);
    *pool = TrampPool{};
    return false;
  }
  // The pool was mapped for every function of the module (14 MB of address space for
  // node's 78 000), whatever the regex chose: the pages past the last trampoline go back.
  const size_t keep = (pool->used + kPage - 1) & ~(kPage - 1);
  if (keep < pool->size) {
    munmap(pool->base + keep, pool->size - keep);
    pool->size = keep;
  }
  if (mprotect(pool->base, pool->size, PROT_READ | PROT_EXEC) != 0) return false;
  // Before any function jumps here: its frames' slots will hold the trampolines' +21.
  sled_pools_publish(reinterpret_cast<uintptr_t>(pool->base),
                     reinterpret_cast<uintptr_t>(pool->base) + pool->used, kTrampSlot);
  return true;
}

}  // namespace callmon::rt
