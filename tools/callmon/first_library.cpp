// first_library_needed(), put_first_library(): first_library.hpp.
#include "tools/callmon/first_library.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>

namespace callmon::tools {

std::optional<std::string> first_library_needed(const std::string& program) {
  int fd = ::open(program.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  elf_version(EV_CURRENT);
  std::optional<std::string> found;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  for (Elf_Scn* scn = nullptr; elf && elf_kind(elf) == ELF_K_ELF && !found &&
                               (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn) || dyn.d_tag != DT_NEEDED) continue;
      const char* name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
      if (name && std::string_view(name).rfind("libasan.so", 0) == 0) {
        found = name;
        break;
      }
    }
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return found;
}

void put_first_library(std::vector<std::string>& env, const std::string& program) {
  auto has = [&env](std::string_view prefix) {
    return std::any_of(env.begin(), env.end(),
                       [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  };
  if (!has("CALLMON_DIR=") && !has("CALLMON_MONITOR=")) return;
  auto first = first_library_needed(program);
  if (!first) return;
  for (std::string& e : env)
    if (e.rfind("LD_PRELOAD=", 0) == 0) {
      e = "LD_PRELOAD=" + *first + ":" + e.substr(11);
      env.push_back("CALLMON_PRELOAD_FIRST=" + *first);
      return;
    }
}

}  // namespace callmon::tools
