// Trampoline pools near a module (see entry_tramp.hpp). Placement follows the sled stubs'
// (sled_stub.cpp): below the module first, 1 MiB steps, never over an existing mapping.
#include "runtime/patching/entry_tramp.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/patching/sled_stub.hpp"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace callmon::rt {

namespace {

constexpr uintptr_t kPage = 4096;
constexpr uintptr_t kStep = 1u << 20;
constexpr int kTries = 512;
constexpr size_t kHead = 16;  // the entry's address, padded

bool reaches(uintptr_t lo, uintptr_t hi, uintptr_t p, size_t size) {
  return rel32_reaches(lo, p) && rel32_reaches(p, hi) && rel32_reaches(lo, p + size) &&
         rel32_reaches(p + size, hi) && rel32_reaches(hi, p) && rel32_reaches(p + size, lo);
}

}  // namespace

bool entry_pool_map(uintptr_t lo, uintptr_t hi, size_t slots, uintptr_t entry, TrampPool* out) {
  *out = TrampPool{};
  size_t size = (kHead + slots * kTrampSlot + kPage - 1) & ~(kPage - 1);
  lo &= ~(kPage - 1);
  hi = (hi + kPage - 1) & ~(kPage - 1);
  for (int k = 1; k <= kTries; ++k) {
    uintptr_t step = static_cast<uintptr_t>(k) * kStep;
    const uintptr_t hints[2] = {lo > step + size ? ((lo - step - size) & ~(kPage - 1)) : 0,
                                hi + step + 64 * kStep};
    for (uintptr_t hint : hints) {
      if (hint < 0x10000 || !reaches(lo, hi, hint, size)) continue;
      void* p = mmap(reinterpret_cast<void*>(hint), size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == MAP_FAILED) continue;
      if (reinterpret_cast<uintptr_t>(p) != hint) {
        munmap(p, size);
        continue;
      }
      out->base = static_cast<uint8_t*>(p);
      out->size = size;
      out->used = kHead;
      memcpy(out->base, &entry, 8);
      memset(out->base + 8, 0xcc, kHead - 8);
      return true;
    }
  }
  return false;
}

uint8_t* entry_pool_slot(TrampPool* pool) {
  if (!pool->base || pool->used + kTrampSlot > pool->size) return nullptr;
  uint8_t* s = pool->base + pool->used;
  pool->used += kTrampSlot;
  memset(s, 0xcc, kTrampSlot);  // int3 after the code: nothing runs past it
  return s;
}

void entry_pool_head(const TrampPool& pool, uint8_t* slot, uintptr_t fn) {
  memcpy(slot, &fn, 8);
  slot[8] = 0xff;  // call *disp32(%rip)
  slot[9] = 0x15;
  int32_t d = static_cast<int32_t>(reinterpret_cast<intptr_t>(pool.base) -
                                   reinterpret_cast<intptr_t>(slot + kTrampCodeOffset));
  memcpy(slot + 10, &d, 4);
}

bool entry_pool_seal(TrampPool* pool) {
  if (!pool->base) return false;
  if (pool->used == kHead) {
    munmap(pool->base, pool->size);
    *pool = TrampPool{};
    return false;
  }
  return mprotect(pool->base, pool->size, PROT_READ | PROT_EXEC) == 0;
}

}  // namespace callmon::rt
