// Symbol look-ups for GOT redirection (got_redirect.cpp): a module's dynamic symbol by name
// through its GNU hash table, and the symbol version a module's relocation asks for.
#pragma once

#include <elf.h>

#include <cstdint>

namespace callmon::rt {

// The dynamic section of a loaded module, its address entries at run time.
struct DynTables {
  uintptr_t base = 0;
  const Elf64_Sym* syms = nullptr;
  const char* strs = nullptr;
  const uint32_t* gnu_hash = nullptr;
  const uint16_t* versym = nullptr;
  const uint32_t* sysv_hash = nullptr;
  const Elf64_Verneed* verneed = nullptr;
  uint64_t verneed_count = 0;
  const Elf64_Verdef* verdef = nullptr;
  uint64_t verdef_count = 0;
};

// Reads the tables of the module loaded at `base` with dynamic section `dyn`.
DynTables dyn_tables(uintptr_t base, const void* dyn);

// The defined symbol `name` of the module (any version), or nullptr; needs DT_GNU_HASH.
const Elf64_Sym* dyn_lookup(const DynTables& t, const char* name);

// The definition of `name` in the module that the dynamic linker would bind a reference
// with version `version` (nullptr: unversioned) to: the versions must match, an
// unversioned definition matches any reference, an unversioned reference takes the default
// version. GNU or SysV hash table. nullptr if the module has none.
const Elf64_Sym* dyn_lookup_version(const DynTables& t, const char* name, const char* version);

// The version the module's symbol `name` is bound to (its DT_VERNEED entry), or nullptr
// for an unversioned reference.
const char* dyn_needed_version(const DynTables& t, const char* name);

}  // namespace callmon::rt
