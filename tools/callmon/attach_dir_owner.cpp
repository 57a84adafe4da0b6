// The recording directory of an attach given to the process's user (attach_dir_owner.hpp).
#include "tools/callmon/attach_dir_owner.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace callmon::tools {

std::optional<FileOwner> process_file_owner(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  std::optional<unsigned long> uid, gid;
  // "Uid:\treal\teffective\tsaved\tfile-system", the same for "Gid:".
  while (std::getline(status, line)) {
    unsigned long ids[4];
    bool is_uid = line.rfind("Uid:", 0) == 0, is_gid = line.rfind("Gid:", 0) == 0;
    if ((is_uid || is_gid) &&
        std::sscanf(line.c_str() + 4, "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2], &ids[3]) == 4)
      (is_uid ? uid : gid) = ids[3];
  }
  if (!uid || !gid) return std::nullopt;
  return FileOwner{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)};
}

Status give_dir_to_process(const std::string& dir, pid_t pid) {
  if (::geteuid() != 0) return ok_status();
  const std::optional<FileOwner> owner = process_file_owner(pid);
  if (!owner || owner->uid == 0) return ok_status();
  if (::chown(dir.c_str(), owner->uid, owner->gid) != 0)
    return Error{"cannot give " + dir + " to user " + std::to_string(owner->uid) +
                 " (process " + std::to_string(pid) + "'s, whose runtime writes the recording): " +
                 std::strerror(errno)};
  return ok_status();
}

}  // namespace callmon::tools
