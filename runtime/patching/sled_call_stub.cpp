// The per-function stubs of the nop-sled mode (see sled_call_stub.hpp; the code they run is
// in arch/x86_64/sled_call.S).
#include "runtime/patching/sled_call_stub.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/patching/sled_stub.hpp"

extern "C" void callmon_sled_enter();   // sled_call.S
extern "C" void callmon_sled_return();  // sled_call.S

namespace callmon::rt {

SledPools g_sled_pools;
bool g_sled_stubs = false;

namespace {

// A pool: two pointers (the trampolines, which the stubs reach indirectly: libcallmon.so
// may be out of rel32 reach of the module), then the stubs, each kSledStubSize aligned.
constexpr uintptr_t kHeader = kSledStubSize;

void put32(uint8_t* at, int64_t v) {
  int32_t d = static_cast<int32_t>(v);
  memcpy(at, &d, 4);
}

}  // namespace

bool sled_pool_open(SledPool* p, uintptr_t lo, uintptr_t hi, size_t sites) {
  *p = SledPool{};
  if (sled_pools_full()) return false;
  size_t size = kHeader + sites * kSledStubSize;
  uintptr_t base = map_near(lo, hi, size, PROT_READ | PROT_WRITE);
  if (!base) return false;
  const uintptr_t tramps[2] = {reinterpret_cast<uintptr_t>(&callmon_sled_enter),
                               reinterpret_cast<uintptr_t>(&callmon_sled_return)};
  memcpy(reinterpret_cast<void*>(base), tramps, sizeof tramps);
  p->base = base;
  p->size = (size + 4095) & ~size_t{4095};
  p->used = kHeader;
  return true;
}

uintptr_t sled_pool_stub(SledPool* p, uintptr_t fn, uintptr_t body) {
  if (!p->base || p->used + kSledStubSize > p->size) return 0;
  uintptr_t s = p->base + p->used;
  if (!rel32_reaches(s + 21, body) || !rel32_reaches(s + 32, body)) return 0;
  auto* c = reinterpret_cast<uint8_t*>(s);
  memset(c, 0xcc, kSledStubSize);  // int3 between the instructions and after the data
  c[0] = 0xff, c[1] = 0x15;        // call *enter(%rip)
  put32(c + 2, static_cast<int64_t>(p->base - (s + 6)));
  c[6] = 0x4d, c[7] = 0x85, c[8] = 0xdb;  // test %r11, %r11
  c[9] = 0x74, c[10] = 27 - 11;           // je s+27
  c[11] = 0x48, c[12] = 0x8d, c[13] = 0x64, c[14] = 0x24, c[15] = 0x08;  // lea 8(%rsp), %rsp
  c[16] = 0xe8;                                                          // call body
  put32(c + 17, static_cast<int64_t>(body - (s + 21)));
  c[21] = 0xff, c[22] = 0x25;  // jmp *exit(%rip)
  put32(c + 23, static_cast<int64_t>(p->base + 8 - (s + 27)));
  c[27] = 0xe9;  // jmp body
  put32(c + 28, static_cast<int64_t>(body - (s + 32)));
  memcpy(c + 32, &fn, sizeof fn);
  p->used += kSledStubSize;
  return s;
}

bool sled_pool_close(SledPool* p) {
  if (!p->base) return false;
  if (p->used == kHeader || mprotect(reinterpret_cast<void*>(p->base), p->size, PROT_READ | PROT_EXEC) != 0) {
    munmap(reinterpret_cast<void*>(p->base), p->size);
    *p = SledPool{};
    return false;
  }
  // Published once executable, before the pass writes a site that jumps to it; up to the
  // last stub written, not the pages.
  sled_pools_publish(p->base, p->base + p->used, kSledStubSize);
  return true;
}

void sled_pools_publish(uintptr_t lo, uintptr_t hi, uintptr_t stride) {
  int n = g_sled_pools.count;
  if (n == kMaxSledPools) return;
  g_sled_pools.lo[n] = lo;
  g_sled_pools.hi[n] = hi;
  g_sled_pools.stride[n] = stride;
  __atomic_store_n(&g_sled_pools.count, n + 1, __ATOMIC_RELEASE);
}

bool sled_stub_start(uintptr_t addr) {
  int n = __atomic_load_n(&g_sled_pools.count, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; ++i)
    if (g_sled_pools.stride[i] == kSledStubSize && addr >= g_sled_pools.lo[i] + kHeader &&
        addr < g_sled_pools.hi[i] && (addr - g_sled_pools.lo[i]) % kSledStubSize == 0)
      return true;
  return false;
}

}  // namespace callmon::rt
