// The threads of a process (see proc_tasks.hpp).
#include "monitor/proc_tasks.hpp"

#include <dirent.h>
#include <errno.h>
#include <sys/ptrace.h>

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

bool seize_threads(pid_t pid, long options, const std::function<void(pid_t)>& seized,
                   const std::function<bool(pid_t, int)>& refused) {
  std::set<pid_t> seen;
  for (int round = 0; round < 100; ++round) {
    bool added = false;
    for (pid_t tid : list_tasks(pid)) {
      if (!seen.insert(tid).second) continue;
      added = true;
      if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(options)) != 0) {
        if (!refused(tid, errno)) return false;
        continue;
      }
      seized(tid);
    }
    if (!added) break;
  }
  return true;
}

}  // namespace callmon::monitor
