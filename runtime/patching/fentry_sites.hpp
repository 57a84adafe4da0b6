// The `call __fentry__` sites of a module built with -pg -mfentry (docs/modes.md, "How the
// -pg modes work"): the first instruction of each function (after an endbr64) that calls
// __fentry__ through the module's own PLT entry or GOT word for it. The sled pass
// (sled_patch.cpp) turns them into jumps to stubs that call the function
// (sled_call_stub.hpp), as it does with nop sleds: the function's return is then not
// redirected. A function whose entry has another shape (a GCC nested function's
// `push %r10` first) is not listed and keeps its call.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>

#include "runtime/patching/sled_elf.hpp"

namespace callmon::rt {

// The calls a module makes of one function it imports (__fentry__, mcount): the module's
// own GOT words for that name (its JUMP_SLOT and GLOB_DAT relocations, read from memory),
// and whether an instruction is a call through one of them: `call rel32` to a PLT entry
// jumping through such a word, or `call *word(%rip)` (GCC's PIC code). No allocation.
class ImportCalls {
 public:
  ImportCalls(const dl_phdr_info* info, const SledModule& m, const char* name);
  bool any() const { return count_ != 0; }
  // The length of the call at `site` (5 or 6), 0 when it is none of those.
  uint8_t call_length(uintptr_t site) const;

 private:
  static constexpr int kMax = 4;
  const SledModule& m_;
  uintptr_t at_[kMax];
  int count_ = 0;
  bool has(uintptr_t a) const;
};

struct FentrySite {
  uintptr_t site;  // the call's address: what the -pg entry records for the function
  uint8_t length;  // 5 (call rel32 to the PLT entry) or 6 (call *GOT(%rip))
};

class FentrySites {
 public:
  // Reads the module `info` (its functions from the file at `path`, its GOT from memory);
  // `m` its executable segments. count() is 0 when it has no such site or cannot be read.
  // No allocation through malloc.
  FentrySites(const dl_phdr_info* info, const char* path, const SledModule& m);
  ~FentrySites();
  FentrySites(const FentrySites&) = delete;
  FentrySites& operator=(const FentrySites&) = delete;

  size_t count() const { return count_; }
  const FentrySite& operator[](size_t i) const { return sites_[i]; }

 private:
  FentrySite* sites_ = nullptr;
  size_t count_ = 0, bytes_ = 0;
};

}  // namespace callmon::rt
