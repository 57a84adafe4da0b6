// The facts the launcher needs from a program's ELF file before it runs it, read in one
// libelf pass: which callmon hooks it was built with (the probe symbols it references:
// __fentry__ for -pg -mfentry, mcount for -pg, __cyg_profile_func_enter for
// -finstrument-functions; `callmon inject` needs the mode, since a return-value rule is only
// possible where the hook runs at the function's first instruction), whether it is linked
// statically (no dynamic loader reads LD_PRELOAD there: privileged_program.cpp refuses it),
// and a library it needs that must come first in the process (gcc's ASan runtime:
// first_library.cpp).
#pragma once

#include <optional>
#include <string>

#include "format/result.hpp"

namespace callmon::tools {

struct HookProbes {
  bool fentry = false;
  bool mcount = false;
  bool cyg = false;
  bool xray = false;  // clang's XRay sleds (xray_instr_map), patched at start-up
};

struct ProgramElf {
  HookProbes probes;  // from .dynsym and .symtab
  // An executable with no program interpreter (-static or -static-pie).
  bool statically_linked = false;
  // The DT_NEEDED entry that must be loaded first (libasan.so.N), if any.
  std::optional<std::string> first_library;
  // Nop sleds for the runtime to patch (-fpatchable-function-entry's
  // __patchable_function_entries, -mrecord-mcount's __mcount_loc).
  bool sleds = false;
  // C++ exceptions unwound by a copy of the unwinder inside the program (-static-libgcc
  // with -static-libstdc++), which the runtime's interposers cannot reach: it has exception
  // tables (.gcc_except_table) and defines _Unwind_RaiseException (.symtab), or, stripped,
  // imports neither an _Unwind_ function nor a personality routine.
  bool own_unwinder = false;
};

// Reads `path`. Errors: the file cannot be opened, or is not an ELF file.
Result<ProgramElf> read_program_elf(const std::string& path);

// "-pg -mfentry", "-pg", "-finstrument-functions" (the first that applies), or "no
// callmon hook" when none does; several joined with " and " for a mixed build.
std::string describe_probes(const HookProbes& p);

}  // namespace callmon::tools
