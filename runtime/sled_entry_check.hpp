// Is a sled site really a function's entry? A list entry is trusted only as far as the
// compiler flags go: with -fpatchable-function-entry=N,M (M > 0) the listed address is M
// nops *before* the function's entry, and a call written there would run into the
// function's first instruction. The unwind tables tell where functions begin: the
// .eh_frame_hdr search table (PT_GNU_EH_FRAME) holds every FDE's start, sorted.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

class EntryCheck {
 public:
  // Reads the module's .eh_frame_hdr table in memory. Without one (or with an encoding
  // other than the usual 4-byte, data-relative one) every site is accepted: known() false.
  explicit EntryCheck(const dl_phdr_info* info);

  bool known() const { return table_ != nullptr; }

  // Whether some function's unwind information starts exactly at `addr`.
  bool starts_function(uintptr_t addr) const;

 private:
  const int32_t* table_ = nullptr;  // pairs (initial location, FDE), relative to base_
  size_t count_ = 0;
  uintptr_t base_ = 0;
};

}  // namespace callmon::rt
