// hook_probes(): a walk over the symbol tables with libelf (hook_probe.hpp).
#include "tools/callmon/hook_probe.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace callmon::tools {

Result<HookProbes> hook_probes(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    if (elf) elf_end(elf);
    close(fd);
    return Error{path + ": not an ELF file"};
  }
  HookProbes p;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0) continue;
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!name) continue;
      std::string_view n(name);
      if (n == "__fentry__") p.fentry = true;
      else if (n == "mcount" || n == "_mcount") p.mcount = true;
      else if (n == "__cyg_profile_func_enter") p.cyg = true;
    }
  }
  elf_end(elf);
  close(fd);
  return p;
}

std::string describe_probes(const HookProbes& p) {
  std::string s;
  auto add = [&s](const char* what) { s += (s.empty() ? "" : " and ") + std::string(what); };
  if (p.fentry) add("-pg -mfentry");
  if (p.mcount) add("-pg");
  if (p.cyg) add("-finstrument-functions");
  return s.empty() ? "no callmon hook" : s;
}

}  // namespace callmon::tools
