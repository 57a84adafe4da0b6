// Live processes of a recording (live_process.hpp).
#include "analysis/live_process.hpp"

#include <filesystem>
#include <fstream>

namespace callmon::analysis {

bool still_recording(const std::string& dir, const format::ProcessMeta& meta) {
  if (meta.exit || meta.pid == 0 || meta.key.empty()) return false;
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(dir, ec);
  if (ec) return false;
  const std::string prefix = (real / meta.key).string() + ".";
  std::ifstream maps("/proc/" + std::to_string(meta.pid) + "/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(prefix) != std::string::npos && line.find(".events") != std::string::npos)
      return true;
  return false;
}

}  // namespace callmon::analysis
