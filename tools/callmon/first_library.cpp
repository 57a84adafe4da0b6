// put_first_library(): first_library.hpp.
#include "tools/callmon/first_library.hpp"

#include "tools/callmon/program_elf.hpp"

#include <algorithm>

namespace callmon::tools {

void put_first_library(std::vector<std::string>& env, const std::string& program) {
  auto has = [&env](std::string_view prefix) {
    return std::any_of(env.begin(), env.end(),
                       [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  };
  if (!has("CALLMON_DIR=") && !has("CALLMON_MONITOR=")) return;
  auto elf = read_program_elf(program);
  if (!elf || !elf->first_library) return;
  const std::string& first = *elf->first_library;
  for (std::string& e : env)
    if (e.rfind("LD_PRELOAD=", 0) == 0) {
      e = "LD_PRELOAD=" + first + ":" + e.substr(11);
      env.push_back("CALLMON_PRELOAD_FIRST=" + first);
      return;
    }
}

}  // namespace callmon::tools
