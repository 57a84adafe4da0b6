// The threads of a process (see proc_tasks.hpp).
#include "monitor/proc_tasks.hpp"

#include <dirent.h>

#include <cstdlib>
#include <string>

namespace callmon::monitor {

std::set<pid_t> list_tasks(pid_t pid) {
  std::set<pid_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.insert(std::atoi(e->d_name));
    closedir(d);
  }
  return tids;
}

}  // namespace callmon::monitor
