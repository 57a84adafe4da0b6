// Stub pages for far sled sites, and the mapping of code near a module (see sled_stub.hpp).
#include "runtime/patching/sled_stub.hpp"

#include <string.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace callmon::rt {

namespace {

constexpr uintptr_t kPage = 4096;
constexpr int kMaxStubs = 64;
constexpr int kTries = 512;
constexpr uintptr_t kStep = 1u << 20;  // candidate addresses 1 MiB apart

struct Stub {
  uintptr_t addr;
  uintptr_t target;
};
Stub g_stubs[kMaxStubs];
int g_stub_count = 0;

bool reaches_all(uintptr_t lo, uintptr_t hi, uintptr_t stub) {
  return rel32_reaches(lo + 5, stub) && rel32_reaches(hi + 5, stub);
}

// [p, p + size) and [lo, hi) reach each other both ways: jumps into the mapping from the
// module and back, and a moved instruction's RIP-relative operand (entry_tramp.hpp).
bool reaches_both(uintptr_t lo, uintptr_t hi, uintptr_t p, size_t size) {
  return rel32_reaches(lo, p) && rel32_reaches(p, hi) && rel32_reaches(lo, p + size) &&
         rel32_reaches(p + size, hi) && rel32_reaches(hi, p) && rel32_reaches(p + size, lo);
}

// Maps `size` bytes at exactly `hint` (never over an existing mapping: MAP_FIXED_NOREPLACE;
// a kernel older than 4.17 takes it as a hint only, hence the check).
bool map_at(uintptr_t hint, size_t size, int prot) {
  void* p = mmap(reinterpret_cast<void*>(hint), size, prot,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return false;
  if (reinterpret_cast<uintptr_t>(p) != hint) {
    munmap(p, size);
    return false;
  }
  return true;
}

}  // namespace

uintptr_t map_near(uintptr_t lo, uintptr_t hi, size_t size, int prot) {
  size = (size + kPage - 1) & ~(kPage - 1);
  // Below the module first: above an executable is where its brk heap grows.
  lo &= ~(kPage - 1);
  hi = (hi + kPage - 1) & ~(kPage - 1);
  for (uintptr_t k = 1; k <= kTries; ++k) {
    const uintptr_t hints[2] = {lo - size - (k - 1) * kStep, hi + (k + 63) * kStep};
    for (uintptr_t hint : hints) {
      // A hint below zero wraps around and fails the reach check.
      if (hint < 0x10000 || !reaches_both(lo, hi, hint, size)) continue;
      if (map_at(hint, size, prot)) return hint;
    }
  }
  return 0;
}

uintptr_t sled_stub_near(uintptr_t lo, uintptr_t hi, uintptr_t target) {
  for (int i = 0; i < g_stub_count; ++i)
    if (g_stubs[i].target == target && reaches_all(lo, hi, g_stubs[i].addr)) return g_stubs[i].addr;
  if (g_stub_count == kMaxStubs) return 0;
  uintptr_t stub = map_near(lo, hi, kPage, PROT_READ | PROT_WRITE);
  if (!stub) return 0;
  // jmp *0(%rip); .quad target
  auto* code = reinterpret_cast<uint8_t*>(stub);
  static const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
  memcpy(code, jmp, sizeof jmp);
  memcpy(code + sizeof jmp, &target, sizeof target);
  if (mprotect(code, kPage, PROT_READ | PROT_EXEC) != 0) {
    munmap(code, kPage);
    return 0;
  }
  g_stubs[g_stub_count++] = {stub, target};
  return stub;
}

bool sled_is_stub(uintptr_t addr) {
  for (int i = 0; i < g_stub_count; ++i)
    if (g_stubs[i].addr == addr) return true;
  return false;
}

}  // namespace callmon::rt
