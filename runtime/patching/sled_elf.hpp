// Finding a loaded module's nop-sled lists: the `__mcount_loc` section (gcc -pg -mfentry
// -mnop-mcount -mrecord-mcount) and `__patchable_function_entries` (gcc and clang
// -fpatchable-function-entry), and clang's XRay sled table `xray_instr_map`
// (-fxray-instrument, callmon/format/xray_map.hpp). All are allocated sections, so their contents are read
// from memory, already relocated by the dynamic loader; only the section headers come
// from the module's file. On the way, what the module says of a C++ unwinder of its own
// (own_unwinder.hpp).
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

inline constexpr int kMaxSledLists = 2;
inline constexpr int kMaxExecSegments = 8;

// One list of sled addresses as the section holds them (8-byte entries).
struct SledList {
  const uintptr_t* entries;
  size_t count;
  uintptr_t link_addr;  // the section's link-time address (for an unrelocated entry's check)
};

// An executable PT_LOAD segment at run time, page-aligned, with its mapping protection.
struct ExecSegment {
  uintptr_t start, end;
  int prot;
};

struct SledModule {
  SledList lists[kMaxSledLists];
  int list_count;
  // The module imports __fentry__ or mcount: a -pg build whose sites hold calls already
  // (the -pg modes handle it); its sled lists are not ours to patch.
  bool imports_pg;
  ExecSegment exec[kMaxExecSegments];
  int exec_count;
  // clang -fxray-instrument's sled table (`xray_instr_map`, xray_sleds.hpp) in memory, and
  // its link-time address; null without one.
  const uint8_t* xray_map;
  size_t xray_size;
  uintptr_t xray_link_addr;
  // What the module tells of a C++ unwinder (own_unwinder.hpp): it has exception tables
  // (.gcc_except_table); its .dynsym imports an _Unwind_ function or a personality routine;
  // it defines _Unwind_RaiseException there (exported), or only in .symtab (a private copy).
  // The symbol tables are read only for a module with exception tables.
  bool eh_tables;
  bool imports_unwinder;
  bool exports_raise;
  bool hides_raise;
};

// Whether [a, a + size) lies within one of the module's executable segments.
inline bool in_exec(const SledModule& m, uintptr_t a, uint64_t size) {
  for (int i = 0; i < m.exec_count; ++i)
    if (a >= m.exec[i].start && a + size <= m.exec[i].end) return true;
  return false;
}

// Reads `info`'s sled lists and executable segments, the section headers from the file at
// `path`. Returns false when the file cannot be read or is not a 64-bit ELF file; a module
// without sleds gives true with list_count 0. No allocation (the file is mapped and
// unmapped again).
bool sled_read_module(const dl_phdr_info* info, const char* path, SledModule* out);

}  // namespace callmon::rt
