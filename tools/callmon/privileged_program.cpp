// privilege_gain: set-ID bits and file capabilities of a program; preload_refusal: those,
// or a statically linked program (program_elf.hpp) (privileged_program.hpp).
#include "tools/callmon/privileged_program.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "tools/callmon/program_elf.hpp"

namespace callmon::tools {
namespace {

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return "UID " + std::to_string(uid);
}

std::string group_name(gid_t gid) {
  if (const group* gr = ::getgrgid(gid)) return gr->gr_name;
  return "GID " + std::to_string(gid);
}

bool in_groups(gid_t gid) {
  if (gid == ::getegid()) return true;
  int n = ::getgroups(0, nullptr);
  if (n <= 0) return false;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  n = ::getgroups(n, groups.data());
  for (int i = 0; i < n; ++i)
    if (groups[static_cast<size_t>(i)] == gid) return true;
  return false;
}

// Linux honours no set-ID bit or capability of an interpreted (#!) file.
bool is_script(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[2] = {};
  size_t n = std::fread(magic, 1, 2, f);
  std::fclose(f);
  return n == 2 && magic[0] == '#' && magic[1] == '!';
}

}  // namespace

std::optional<std::string> privilege_gain(const std::string& program) {
  struct stat st {};
  if (::stat(program.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  struct statvfs fs {};
  if (::statvfs(program.c_str(), &fs) == 0 && (fs.f_flag & ST_NOSUID)) return std::nullopt;
  std::string why;
  if ((st.st_mode & S_ISUID) && st.st_uid != ::geteuid())
    why = "is set-user-ID " + user_name(st.st_uid);
  else if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && !in_groups(st.st_gid))
    why = "is set-group-ID " + group_name(st.st_gid);
  // Root gains nothing from file capabilities (it has them all), so no secure mode for it.
  else if (::geteuid() != 0 && ::getxattr(program.c_str(), "security.capability", nullptr, 0) > 0)
    why = "has file capabilities (security.capability)";
  if (why.empty() || is_script(program)) return std::nullopt;
  return why;
}

std::optional<std::string> preload_refusal(const std::string& program, const std::string& shown,
                                           const ProgramElf* elf) {
  Result<ProgramElf> read = elf ? Result<ProgramElf>(*elf) : read_program_elf(program);
  if (read && read->statically_linked)
    return shown + " is statically linked: callmon's runtime is loaded with LD_PRELOAD, "
           "which only the dynamic loader reads, so callmon would see nothing; " + shown +
           " was not run (link it dynamically, without -static; `callmon monitor` counts its "
           "calls with ptrace)";
  auto why = privilege_gain(program);
  if (!why) return std::nullopt;
  return shown + " " + *why +
         ": it runs as another user or with privileges you do not have, so the dynamic "
         "loader ignores LD_PRELOAD for it (secure-execution mode) and callmon would see "
         "nothing; " + shown + " was not run (run callmon as the user it runs as, or use a "
         "copy without the set-ID bits or capabilities; `callmon monitor` traces it with "
         "ptrace when you may)";
}

}  // namespace callmon::tools
