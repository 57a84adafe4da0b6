// Function starts from the .eh_frame_hdr search table (see sled_entry_check.hpp).
#include "runtime/patching/sled_entry_check.hpp"

#include <elf.h>
#include <string.h>

namespace callmon::rt {

namespace {

// DWARF pointer encodings used by the header (LSB "Exception Frame Header").
constexpr uint8_t kUdata4 = 0x03;
constexpr uint8_t kSdata4 = 0x0b;
constexpr uint8_t kPcrel = 0x10;
constexpr uint8_t kDatarel = 0x30;

}  // namespace

EntryCheck::EntryCheck(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_GNU_EH_FRAME || ph.p_memsz < 12) continue;
    auto* h = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    // version 1; eh_frame_ptr: pcrel sdata4 (skipped); fde_count: udata4; table: datarel
    // sdata4 pairs. That is what GNU ld, gold and lld write.
    if (h[0] != 1 || h[1] != (kPcrel | kSdata4) || h[2] != kUdata4 ||
        h[3] != (kDatarel | kSdata4))
      return;
    uint32_t count = *reinterpret_cast<const uint32_t*>(h + 8);
    if (12 + static_cast<uint64_t>(count) * 8 > ph.p_memsz) return;
    base_ = reinterpret_cast<uintptr_t>(h);
    table_ = reinterpret_cast<const int32_t*>(h + 12);
    count_ = count;
    return;
  }
}

EntryCheck::Where EntryCheck::where(uintptr_t addr) const {
  // The last FDE starting at or before addr.
  size_t lo = 0, hi = count_;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (base_ + static_cast<intptr_t>(table_[2 * mid]) <= addr) lo = mid + 1;
    else hi = mid;
  }
  // A function starting within the 5 bytes a call would take (the sled is in front of
  // its entry: -fpatchable-function-entry=N,M).
  if (lo < count_) {
    uintptr_t next = base_ + static_cast<intptr_t>(table_[2 * lo]);
    if (next > addr && next < addr + 5) return Where::kInside;
  }
  if (lo == 0) return Where::kUnknown;
  uintptr_t loc = base_ + static_cast<intptr_t>(table_[2 * (lo - 1)]);
  if (loc == addr) return Where::kStart;
  // The FDE: length (4), CIE pointer (4), pc_begin, pc_range. pc_begin is read as the
  // GNU tools write it on x86-64 (pcrel sdata4, then a 4-byte range); if it does not
  // decode to the table's location the FDE uses another encoding: nothing known.
  auto* fde = reinterpret_cast<const uint8_t*>(base_ + static_cast<intptr_t>(table_[2 * (lo - 1) + 1]));
  int32_t begin, range;
  memcpy(&begin, fde + 8, 4);
  memcpy(&range, fde + 12, 4);
  if (reinterpret_cast<uintptr_t>(fde + 8) + static_cast<intptr_t>(begin) != loc) return Where::kUnknown;
  return addr < loc + static_cast<uint32_t>(range) ? Where::kInside : Where::kUnknown;
}

}  // namespace callmon::rt
