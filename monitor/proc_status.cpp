// A process's /proc/PID/status lines (proc_status.hpp).
#include "monitor/proc_status.hpp"

#include <fstream>
#include <sstream>

namespace callmon::monitor {

std::vector<std::string> proc_status_fields(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  std::vector<std::string> fields;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream words(line.substr(key.size() + 1));
    for (std::string w; words >> w;) fields.push_back(w);
    break;
  }
  return fields;
}

}  // namespace callmon::monitor
