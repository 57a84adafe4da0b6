// The functions of a loaded module that entry patching may choose from (docs/patching.md,
// "Entry patching"): FUNC symbols of .symtab (read from the file on disk: it is not loaded)
// and .dynsym, and, for code no symbol covers (a stripped binary), the starts of the
// .eh_frame FDEs (the .eh_frame_hdr table in memory) with their ranges as sizes. Only code
// in executable sections other than the PLT's. No allocation through malloc: the list
// lives in pages of its own.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

struct EntryFunction {
  uintptr_t addr;    // run-time address
  uint64_t size;     // bytes (symbol size or FDE range); 0: unknown
  const char* name;  // in the mapped file; nullptr for an FDE without symbol
  bool unwound = false;  // an FDE of .eh_frame_hdr's table covers its entry
};

class ModuleFunctions {
 public:
  // Reads the module `info` from the file at `path`. ok() is false when the file cannot be
  // read or is no 64-bit ELF file with section headers (error() says which).
  ModuleFunctions(const dl_phdr_info* info, const char* path);
  ~ModuleFunctions();
  ModuleFunctions(const ModuleFunctions&) = delete;
  ModuleFunctions& operator=(const ModuleFunctions&) = delete;

  bool ok() const { return error_ == nullptr; }
  const char* error() const { return error_; }

  // Sorted by address, one per address (a name from .symtab first).
  const EntryFunction* begin() const { return items_; }
  const EntryFunction* end() const { return items_ + count_; }
  size_t count() const { return count_; }

  // The module's program entry point (e_entry, run time): `_start` is jumped to by the
  // kernel, with no return address to redirect.
  uintptr_t entry_point() const { return entry_; }
  // The name of a hook the module imports (mcount, __fentry__,
  // __cyg_profile_func_enter) when it is built with instrumentation, else nullptr.
  const char* imported_hook() const { return hook_; }
  // Whether the module has an .eh_frame_hdr table of FDEs: then a function without one
  // (EntryFunction::unwound false) is code no compiler made as a function.
  bool has_unwind_table() const { return unwind_table_; }

 private:
  void add(uintptr_t addr, uint64_t size, const char* name);
  bool reserve(size_t n);

  void* map_ = nullptr;
  size_t map_size_ = 0;
  EntryFunction* items_ = nullptr;
  size_t count_ = 0, cap_ = 0;
  size_t bytes_ = 0;
  uintptr_t entry_ = 0;
  const char* hook_ = nullptr;
  bool unwind_table_ = false;
  const char* error_ = nullptr;
};

}  // namespace callmon::rt
