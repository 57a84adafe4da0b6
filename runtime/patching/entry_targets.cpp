// The module-wide sweep for direct branch targets (see entry_targets.hpp).
#include "runtime/patching/entry_targets.hpp"

#include <sys/mman.h>
#include <time.h>

#include "runtime/patching/entry_decode.hpp"

namespace callmon::rt {

namespace {

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);  // CPU time: the machine may be loaded
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

BranchTargets::~BranchTargets() {
  if (bits_) munmap(bits_, map_size_);
}

void BranchTargets::mark(uintptr_t a) {
  if (a < lo_ || a >= hi_) return;  // into another module, or the PLT's stubs' neighbours
  const uintptr_t k = a - lo_;
  bits_[k >> 3] = static_cast<uint8_t>(bits_[k >> 3] | (1u << (k & 7)));
}

bool BranchTargets::build(const SledModule& m, const ModuleFunctions& funcs) {
  if (m.exec_count == 0) return false;
  const uint64_t t0 = now_ns();
  lo_ = m.exec[0].start;
  hi_ = m.exec[m.exec_count - 1].end;
  map_size_ = ((hi_ - lo_) / 8 + 4096) & ~size_t{4095};
  void* p = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    bits_ = nullptr;
    return false;
  }
  bits_ = static_cast<uint8_t*>(p);
  uintptr_t done = 0;  // swept up to here (the list is sorted by address)
  for (const EntryFunction& f : funcs) {
    if (f.size == 0 || !in_exec(m, f.addr, f.size)) continue;
    const uintptr_t from = f.addr > done ? f.addr : done, end = f.addr + f.size;
    insns_ += entry_sweep(from, end, [this](uintptr_t, uint8_t, uintptr_t target) {
      if (target) mark(target);
    });
    if (end > done) {
      bytes_ += end - from;
      done = end;
    }
  }
  nanos_ = now_ns() - t0;
  return true;
}

uintptr_t BranchTargets::hit(uintptr_t lo, uintptr_t hi) const {
  if (!bits_) return 0;
  for (uintptr_t a = lo; a < hi; ++a) {
    if (a < lo_ || a >= hi_) continue;
    const uintptr_t k = a - lo_;
    if (bits_[k >> 3] & (1u << (k & 7))) return a;
  }
  return 0;
}

}  // namespace callmon::rt
