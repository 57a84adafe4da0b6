// privilege_gain: set-ID bits and file capabilities of a program; statically_linked: its
// program headers (privileged_program.hpp).
#include "tools/callmon/privileged_program.hpp"

#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

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

bool statically_linked(const std::string& program) {
  int fd = ::open(program.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf64_Ehdr eh{};
  bool is_static = false;
  if (::pread(fd, &eh, sizeof eh, 0) == static_cast<ssize_t>(sizeof eh) &&
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
      (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) && eh.e_phentsize == sizeof(Elf64_Phdr) &&
      eh.e_phnum > 0 && eh.e_phnum < 4096) {
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    const auto bytes = static_cast<ssize_t>(ph.size() * sizeof(Elf64_Phdr));
    if (::pread(fd, ph.data(), static_cast<size_t>(bytes), static_cast<off_t>(eh.e_phoff)) == bytes) {
      bool interp = false, dynamic = false;
      for (const Elf64_Phdr& p : ph) {
        interp |= p.p_type == PT_INTERP;
        dynamic |= p.p_type == PT_DYNAMIC;
      }
      // A shared library has PT_DYNAMIC and no PT_INTERP too, but is not run as a program;
      // -static-pie has both PT_DYNAMIC and no interpreter, and is static all the same. Tell
      // them apart by the type: an ET_EXEC without an interpreter, or an ET_DYN whose
      // entry is set and that has no interpreter (a library's entry point is 0 or it names
      // its interpreter, as libc.so.6 does).
      is_static = !interp && (eh.e_type == ET_EXEC || (dynamic && eh.e_entry != 0));
    }
  }
  ::close(fd);
  return is_static;
}

std::optional<std::string> preload_refusal(const std::string& program, const std::string& shown) {
  if (statically_linked(program))
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
