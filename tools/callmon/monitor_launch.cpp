// monitor_env(), inheritable_copy(), inheritable_output(): monitor_launch.hpp.
#include "tools/callmon/monitor_launch.hpp"

#include "tools/callmon/program_launch.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/file_mode.hpp"

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

Result<int> inheritable_output(const std::string& path, const std::string& what, mode_t mode) {
  int fd;
  if (!path.empty()) {
    int file = format::create_file(path, O_TRUNC | O_APPEND, mode);
    if (file < 0) return Error{path + ": cannot create the file: " + std::strerror(errno)};
    fd = inheritable_copy(file);
    close(file);
  } else {
    fd = inheritable_copy(STDERR_FILENO);
  }
  if (fd < 0) return Error{"cannot pass " + what + " on: " + std::strerror(errno)};
  return fd;
}

}  // namespace callmon::tools
