// Which hook mode an instrumented executable was built in, from the probe symbols it
// references: __fentry__ (-pg -mfentry), mcount (-pg), __cyg_profile_func_enter
// (-finstrument-functions). `callmon inject` needs it before the program starts: a
// return-value rule is only possible where the hook runs at the function's first
// instruction (-pg -mfentry).
#pragma once

#include <string>

#include "format/result.hpp"

namespace callmon::tools {

struct HookProbes {
  bool fentry = false;
  bool mcount = false;
  bool cyg = false;
};

// The probes `path`'s symbol tables (.dynsym and .symtab) name. Errors: the file cannot be
// opened or is not ELF.
Result<HookProbes> hook_probes(const std::string& path);

// "-pg -mfentry", "-pg", "-finstrument-functions" (the first that applies), or "no
// callmon hook" when none does; several joined with " and " for a mixed build.
std::string describe_probes(const HookProbes& p);

}  // namespace callmon::tools
