// AddrIndex: a flat open-addressing hash map from a function address to a small dense
// index, with a one-entry cache in front. The call walk looks an address up at every
// ENTER, so this is the hottest structure of the analysis: no node allocation, no
// std::map, and the common case (the same function again, or a nearby hot set) stays in
// one or two cache lines.
#pragma once

#include <cstdint>
#include <vector>

namespace callmon::analysis {

class AddrIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  AddrIndex() { rehash(64); }

  // Returns the index stored for `addr`, or stores `next` for it and returns `next`.
  // `inserted` tells which.
  uint32_t find_or_insert(uint64_t addr, uint32_t next, bool& inserted) {
    inserted = false;
    if (addr == cached_addr_ && cached_index_ != kNone) return cached_index_;
    size_t i = hash(addr) & mask_;
    for (;;) {
      Slot& s = slots_[i];
      if (s.index == kNone) break;
      if (s.addr == addr) return remember(addr, s.index);
      i = (i + 1) & mask_;
    }
    inserted = true;
    slots_[i] = Slot{addr, next};
    if (++size_ * 2 > slots_.size()) rehash(slots_.size() * 2);
    return remember(addr, next);
  }

  // The index stored for `addr`, or kNone.
  uint32_t find(uint64_t addr) const {
    size_t i = hash(addr) & mask_;
    for (;;) {
      const Slot& s = slots_[i];
      if (s.index == kNone) return kNone;
      if (s.addr == addr) return s.index;
      i = (i + 1) & mask_;
    }
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t addr = 0;
    uint32_t index = kNone;  // kNone marks an empty slot (address 0 is a valid key)
  };

  static size_t hash(uint64_t addr) {
    // Function addresses share their high bits and are 16-byte aligned: mix them all.
    uint64_t h = addr * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 29);
  }

  uint32_t remember(uint64_t addr, uint32_t index) {
    cached_addr_ = addr;
    cached_index_ = index;
    return index;
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (const Slot& s : old) {
      if (s.index == kNone) continue;
      size_t i = hash(s.addr) & mask_;
      while (slots_[i].index != kNone) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  uint64_t cached_addr_ = 0;
  uint32_t cached_index_ = kNone;
};

}  // namespace callmon::analysis
