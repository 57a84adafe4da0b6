// Libraries that must be the first of a process. gcc's -fsanitize=address links the ASan
// runtime (libasan.so.N) dynamically, and ASan refuses to start unless it comes first in the
// initial library list ("ASan runtime does not come first..."), which callmon's runtime
// in LD_PRELOAD takes from it: the program exited with status 1 before main. Such a
// program gets the library in front of callmon's runtime in LD_PRELOAD, and the runtime is
// told (CALLMON_PRELOAD_FIRST) to take it out again for the programs it executes, which did
// not have it without callmon (runtime/interposers/child_env.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace callmon::tools {

// The DT_NEEDED entry of `program` that must be loaded first (libasan.so.N), or nothing: not
// ELF, no such entry, or the file cannot be read.
std::optional<std::string> first_library_needed(const std::string& program);

// When `env` preloads callmon's runtime (it sets CALLMON_DIR or CALLMON_MONITOR) and
// `program` needs a first library, puts it at the front of LD_PRELOAD and adds
// CALLMON_PRELOAD_FIRST=<it>; otherwise leaves `env` as it is.
void put_first_library(std::vector<std::string>& env, const std::string& program);

}  // namespace callmon::tools
