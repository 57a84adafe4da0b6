// find_callmon_library(), monitor_env(), inheritable_copy(): monitor_launch.hpp.
#include "tools/callmon/monitor_launch.hpp"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace callmon::tools {

namespace fs = std::filesystem;

Result<std::string> find_callmon_library(const std::string& name, const char* override_env) {
  if (const char* env = override_env ? std::getenv(override_env) : nullptr) {
    if (access(env, R_OK) == 0) return std::string(env);
    return Error{std::string(override_env) + "=" + env + ": no such file"};
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Error{"cannot find the callmon executable's directory"};
  self[n] = 0;
  fs::path prefix = fs::path(self).parent_path().parent_path();
  for (const char* sub : {"lib", "lib64", "lib/x86_64-linux-gnu"}) {
    fs::path lib = prefix / sub / name;
    if (access(lib.c_str(), R_OK) == 0) return lib.string();
  }
  std::string hint = override_env ? std::string(" (set ") + override_env + ")" : "";
  return Error{"cannot find " + name + " under " + prefix.string() + "/lib" + hint};
}

Result<std::vector<std::string>> monitor_env(const std::string& runtime,
                                             const std::string& monitor,
                                             const MonitorOptions& options) {
  std::vector<std::string> env;
  std::string preload = runtime;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "CALLMON_", 8) == 0) continue;
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0) {
      if ((*e)[11]) preload += ":" + std::string(*e + 11);
      continue;
    }
    env.emplace_back(*e);
  }
  std::string lines;
  for (auto& [key, value] : options) {
    if (value.find('\n') != std::string::npos || key.find('=') != std::string::npos)
      return Error{"monitor option " + key + " cannot hold a newline"};
    lines += key + "=" + value + "\n";
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("CALLMON_MONITOR=" + monitor);
  env.push_back("CALLMON_MONITOR_OPTIONS=" + lines);
  return env;
}

int inheritable_copy(int fd) { return fcntl(fd, F_DUPFD, 100); }

}  // namespace callmon::tools
