// The dlmopen'ed modules of a recording and their sentence (unrecorded_modules.hpp).
#include "analysis/unrecorded_modules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace callmon::analysis {

std::vector<std::string> dlmopen_modules(const format::Recording& rec) {
  std::vector<std::string> out;
  for (const format::ProcessRecording& proc : rec.processes)
    for (const std::string& path : proc.meta.dlmopen_modules)
      if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  return out;
}

std::string dlmopen_sentence(const std::vector<std::string>& paths) {
  if (paths.empty()) return "";
  return fmt::format("{} loaded with dlmopen into another namespace {} not recorded: {}",
                     paths.size() == 1 ? std::string("1 module")
                                       : fmt::format("{} modules", paths.size()),
                     paths.size() == 1 ? "is" : "are", fmt::join(paths, ", "));
}

}  // namespace callmon::analysis
