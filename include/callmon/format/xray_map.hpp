// The sled table of clang's -fxray-instrument (section `xray_instr_map`): one 32-byte entry
// per sled, in the layout LLVM's XRay runtime reads (its XRaySledEntry): the sled's address
// (8 bytes), its function's entry address (8), the kind (1), whether the function is
// always instrumented (1), the entry's version (1), 13 bytes of padding. From version 2 on
// (clang 13 and later) both addresses are PC-relative: each field holds the distance from
// its own address; before, they were absolute (relocated by the loader in memory). The
// entries of one function follow each other. Header-only, decoding only (no system call,
// no allocation): the runtime patches the sleds by it (runtime/patching/xray_sleds.cpp),
// `callmon coverage` lists the functions that have them (analysis/instrumented_code.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace callmon::format {

inline constexpr size_t kXraySledEntrySize = 32;

// XRay's sled kinds. The entry kinds are followed by the function's body; an exit sled is
// a `ret` followed by nops; a tail sled precedes a tail call's jump.
enum class XrayKind : uint8_t {
  kEntry = 0,
  kExit = 1,
  kTail = 2,
  kLogArgsEntry = 3,  // an entry sled of a function whose first argument XRay would log
  kCustomEvent = 4,   // __xray_customevent() sites: not calls, never patched by callmon
  kTypedEvent = 5,
};

struct XraySled {
  uintptr_t address;   // the sled's first byte
  uintptr_t function;  // its function's entry
  XrayKind kind;
  uint8_t version;
};

// Number of entries in a table of `size` bytes (a trailing partial entry is ignored).
inline size_t xray_sled_count(size_t size) { return size / kXraySledEntrySize; }

// Decodes entry `i` of the table whose bytes are at `table` and which lies at address
// `table_addr` (its run-time address for a table read in memory, its link-time address for
// one read from the file: the PC-relative fields then give link-time addresses). An
// absolute (version 0/1) entry is taken as it stands. False when `i` is past the end or
// the entry's version is one this decoder does not know (> 2).
inline bool xray_decode(const uint8_t* table, size_t size, uintptr_t table_addr, size_t i,
                        XraySled* out) {
  if (i >= xray_sled_count(size)) return false;
  const uint8_t* e = table + i * kXraySledEntrySize;
  uint64_t address, function;
  std::memcpy(&address, e, 8);
  std::memcpy(&function, e + 8, 8);
  out->kind = static_cast<XrayKind>(e[16]);
  out->version = e[18];
  if (out->version > 2) return false;
  if (out->version == 2) {
    uintptr_t at = table_addr + i * kXraySledEntrySize;
    address += at;
    function += at + 8;
  }
  out->address = static_cast<uintptr_t>(address);
  out->function = static_cast<uintptr_t>(function);
  return true;
}

}  // namespace callmon::format
