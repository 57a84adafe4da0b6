// monitor_env(), inheritable_copy(): monitor_launch.hpp.
#include "tools/callmon/monitor_launch.hpp"

#include "tools/callmon/program_launch.hpp"

#include <fcntl.h>

namespace callmon::tools {

Result<std::vector<std::string>> monitor_env(const std::string& runtime,
                                             const std::string& monitor,
                                             const MonitorOptions& options) {
  std::vector<std::string> env = preload_env(runtime);
  std::string lines;
  for (auto& [key, value] : options) {
    if (value.find('\n') != std::string::npos || key.find('=') != std::string::npos)
      return Error{"monitor option " + key + " cannot hold a newline"};
    lines += key + "=" + value + "\n";
  }
  env.push_back("CALLMON_MONITOR=" + monitor);
  env.push_back("CALLMON_MONITOR_OPTIONS=" + lines);
  return env;
}

int inheritable_copy(int fd) { return fcntl(fd, F_DUPFD, 100); }

}  // namespace callmon::tools
