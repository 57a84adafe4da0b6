// The recording directory of an attach given to the process's user (attach_dir_owner.hpp).
#include "tools/callmon/attach_dir_owner.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "monitor/proc_status.hpp"

namespace callmon::tools {

std::optional<FileOwner> process_file_owner(pid_t pid) {
  // "Uid:\treal\teffective\tsaved\tfile-system", the same for "Gid:".
  const std::vector<std::string> uid = monitor::proc_status_fields(pid, "Uid");
  const std::vector<std::string> gid = monitor::proc_status_fields(pid, "Gid");
  if (uid.size() != 4 || gid.size() != 4) return std::nullopt;
  try {
    return FileOwner{static_cast<uid_t>(std::stoul(uid[3])), static_cast<gid_t>(std::stoul(gid[3]))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
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
