// One ELF file as the symbolizer sees it: its function symbols (.symtab, or .dynsym when the
// file is stripped) sorted by address, and the source line of each function from DWARF
// (elfutils libdw), read lazily on the first query for a compile unit. Separate debug files
// (build-id or .gnu_debuglink under /usr/lib/debug) are used when the file has no DWARF or no
// .symtab of its own. ElfCache opens every path once. Nothing here is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/result.hpp"

struct Dwarf;  // elfutils libdw's handle (<elfutils/libdw.h>)

namespace callmon::analysis {

struct FuncSymbol {
  uint64_t start = 0;  // ELF virtual address
  uint64_t size = 0;   // 0 when the symbol table gives none
  std::string name;    // as in the symbol table (mangled)
};

struct SourceLocation {
  std::string file;  // empty if unknown
  uint32_t line = 0; // 0 if unknown
};

// A statement start from a DWARF line table: the first address of a run of rows on one line.
struct StatementRow {
  uint64_t vaddr = 0;
  std::string file;  // as completed by source_of()
  uint32_t line = 0;
};

class ElfImage {
 public:
  // Opens `path` and reads its function symbols. Errors: the file cannot be opened or is not
  // an ELF file. DWARF is not touched until source_of() is called.
  static Result<std::unique_ptr<ElfImage>> open(const std::string& path);
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  // The function symbol containing ELF virtual address `vaddr`: the symbol starting exactly
  // there, else a sized symbol whose range covers it, else a zero-size symbol immediately
  // preceding it. nullptr when none.
  const FuncSymbol* find_function(uint64_t vaddr) const;

  // Declaration file and line of the function whose code starts at (or covers) `vaddr`, from
  // the subprogram's DW_AT_decl_file/decl_line, else from the line table row at `vaddr`.
  // Empty when the file has no usable DWARF. Cached per address.
  const SourceLocation& source_of(uint64_t vaddr);

  // The line table's line for the instruction at `vaddr` (not the function's declaration,
  // as source_of gives): where a call site is. 0 when unknown.
  uint32_t line_at(uint64_t vaddr);

  // The bytes of the file's allocated, file-backed section content at [vaddr, vaddr + n)
  // (code, read from the ELF file), or fewer when the range leaves its section; empty when no
  // section holds `vaddr`.
  std::vector<uint8_t> read_bytes(uint64_t vaddr, size_t n);

  // Every statement start of every compile unit's line table (is_stmt rows where the file or
  // line changes), in table order. Empty when the file has no usable DWARF.
  std::vector<StatementRow> statement_rows();

  // The libdw handle of the file's DWARF: its own, or the separate debug file's when it has
  // none (the same one source_of() reads). Opened on the first call and owned by the image.
  // nullptr when neither file has usable DWARF.
  ::Dwarf* dwarf();

  const std::string& path() const { return path_; }
  size_t symbol_count() const { return symbols_.size(); }
  // Every function symbol, sorted by address, one per address (aliases folded).
  const std::vector<FuncSymbol>& symbols() const { return symbols_; }
  // Lowest p_vaddr of the PT_LOAD segments: the load bias of a mapped image is the address of
  // its file-offset-0 mapping minus this (page-aligned). 0 for PIE and shared libraries.
  uint64_t load_vaddr() const { return load_vaddr_; }

 private:
  struct File;   // an open descriptor and its libelf handle
  struct DwarfState;  // libdw state, built lazily
  ElfImage() = default;
  void read_symbols();
  bool ensure_dwarf();
  SourceLocation lookup_source(uint64_t vaddr);

  std::string path_;
  std::unique_ptr<File> main_;
  std::unique_ptr<File> debug_;  // separate debug file, may be null
  std::vector<FuncSymbol> symbols_;
  uint64_t load_vaddr_ = 0;
  std::unique_ptr<DwarfState> dwarf_;
  std::unordered_map<uint64_t, SourceLocation> sources_;
};

// ELF images by path, opened on first use and kept (with the reason of a failure) for the
// life of the cache, so a library shared by many processes is read once.
class ElfCache {
 public:
  // The image of `path`, or nullptr with `*error` set to why it cannot be read.
  ElfImage* get(const std::string& path, std::string* error);
  // Forgets what get(path) read (the file at `path` may have been replaced meanwhile).
  void forget(const std::string& path) { entries_.erase(path); }

 private:
  struct Entry {
    std::unique_ptr<ElfImage> image;
    std::string error;
  };
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace callmon::analysis
