// Is a sled site really a function's entry? A list entry is trusted only as far as the
// compiler flags go: with -fpatchable-function-entry=N,M (M > 0) the listed address is M
// nops *before* the function's entry, and a call written there would run into the
// function's first instruction. The unwind tables tell where functions begin: the
// .eh_frame_hdr search table (PT_GNU_EH_FRAME) holds every FDE's start, sorted, and each
// FDE its length.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

class EntryCheck {
 public:
  // Reads the module's .eh_frame_hdr table in memory. Without one (or with an encoding
  // other than the usual 4-byte, data-relative one) known() is false: nothing can be
  // confirmed, and the patcher leaves every site alone.
  explicit EntryCheck(const dl_phdr_info* info);

  bool known() const { return table_ != nullptr; }

  // What the unwind tables say about a 5-byte sled at `addr`: a function's unwind
  // information starts there; kInside: it lies inside a function (past its start) or a
  // function starts within its 5 bytes; or nothing covers it (code built without unwind
  // tables: nothing known).
  enum class Where { kStart, kInside, kUnknown };
  Where where(uintptr_t addr) const;

 private:
  const int32_t* table_ = nullptr;  // pairs (initial location, FDE), relative to base_
  size_t count_ = 0;
  uintptr_t base_ = 0;
};

}  // namespace callmon::rt
