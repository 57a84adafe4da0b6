// Symbolization of recorded addresses: ELF symtab and dynsym of every module a process had
// mapped (PIE, shared libraries, dlopen'd modules), demangled C++ names, DWARF file:line
// through elfutils libdw when present. ELF files are opened once per path and shared by
// all processes (a fork storm reads each library once).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/process_meta.hpp"

namespace callmon::analysis {

struct SymbolInfo {
  std::string name;    // demangled function name; for an unknown address "module+0xoff"
                       // or "0x<addr>" when no module covers it
  std::string module;  // path of the module that holds the address, empty if none
  std::string file;    // source file from DWARF, empty if unknown
  uint32_t line = 0;   // source line of the function's start, 0 if unknown
  uint64_t offset = 0; // address - symbol start (0 for an exact function address)
  bool known = false;  // a symbol covered the address
};

class ElfCache;  // ELF/DWARF images by path, shared between processes
class ElfImage;  // one ELF file (elf_image.hpp)

// Resolves addresses of one process image. Not thread-safe. Results are cached per address.
class ProcessSymbolizer {
 public:
  // `meta` supplies the module map and the `symbol` lines; `cache` may be shared by the
  // symbolizers of several processes.
  ProcessSymbolizer(const format::ProcessMeta& meta, std::shared_ptr<ElfCache> cache);
  ~ProcessSymbolizer();

  // The function holding `addr`, a runtime address or one tagged by a reader with its
  // module line (format/module_lifetimes.hpp). The reference stays valid for the
  // symbolizer's life.
  const SymbolInfo& lookup(uint64_t addr);

  // The ELF image holding `addr` (as lookup() takes it) and the address's ELF virtual
  // address there; image nullptr when no readable module covers it.
  struct CodeRef {
    ElfImage* image = nullptr;
    uint64_t vaddr = 0;
  };
  CodeRef code_of(uint64_t addr);

  // Problems met so far (an ELF that could not be opened, a module without symbols), one
  // sentence each, without duplicates.
  const std::vector<std::string>& warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::shared_ptr<ElfCache> make_elf_cache();

// Demangles a C++ symbol with abi::__cxa_demangle; returns the input when it is not a
// mangled name.
std::string demangle(const std::string& symbol);

// The name symbolizers give `symbol`: demangled, or as it is after set_mangled_names(true)
// (--demangle=no; set once by the command line before any symbolization).
std::string symbol_name(const std::string& symbol);
void set_mangled_names(bool on);

}  // namespace callmon::analysis
