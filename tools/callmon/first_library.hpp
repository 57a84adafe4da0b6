// Libraries that must be the first of a process. gcc's -fsanitize=address links the ASan
// runtime (libasan.so.N) dynamically, and ASan refuses to start unless it comes first in the
// initial library list ("ASan runtime does not come first..."), which callmon's runtime
// in LD_PRELOAD takes from it: the program exited with status 1 before main. Such a
// program gets the library in front of callmon's runtime in LD_PRELOAD, and the runtime is
// told (CALLMON_PRELOAD_FIRST) to take it out again for the programs it executes, which did
// not have it without callmon (runtime/interposers/child_env.cpp).
#pragma once

#include <string>
#include <vector>

namespace callmon::tools {

// When `env` preloads callmon's runtime (it sets CALLMON_DIR or CALLMON_MONITOR) and
// `program` needs a first library (program_elf.hpp: the DT_NEEDED libasan.so.N), puts it at the front of LD_PRELOAD and adds
// CALLMON_PRELOAD_FIRST=<it>; otherwise leaves `env` as it is.
void put_first_library(std::vector<std::string>& env, const std::string& program);

}  // namespace callmon::tools
