// Which functions of an ELF file carry callmon's instrumentation: those whose code calls a
// probe (__cyg_profile_func_enter for -finstrument-functions, mcount/_mcount for -pg,
// __fentry__ for -pg -mfentry), and those with a sled the compiler listed (nop sleds of
// -fpatchable-function-entry and -mnop-mcount -mrecord-mcount, XRay's entry sleds), which
// the runtime patches at start-up. Coverage lists these as the functions that could have been
// recorded, so libc's functions, or a file built without the flags, are not counted as
// never called.
//
// The probe is found the way the linker left it: a defined symbol (a runtime linked in), a
// PLT entry whose GOT slot the dynamic relocations bind to the probe (a `call rel32` to the
// entry), or the GOT slot itself (`call *slot(%rip)`, -fno-plt). Each function symbol's bytes
// are then searched for such a call; a stray match inside another instruction would need the
// exact 32-bit displacement of the probe, so false positives are not a practical concern.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::analysis {

struct InstrumentedFunction {
  uint64_t vaddr = 0;  // ELF virtual address of the function's first byte
  uint64_t size = 0;
  std::string name;    // mangled, as in the symbol table
};

// The instrumented functions of `path`, sorted by address, one per address. Errors: the file
// cannot be opened or is not ELF. An ELF file without any probe gives an empty list.
Result<std::vector<InstrumentedFunction>> instrumented_functions(const std::string& path);

}  // namespace callmon::analysis
