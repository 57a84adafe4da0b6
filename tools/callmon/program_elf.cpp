// read_program_elf(), describe_probes(): one walk over a program's headers, dynamic section
// and symbol tables with libelf (program_elf.hpp).
#include "tools/callmon/program_elf.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace callmon::tools {
namespace {

// A shared library has PT_DYNAMIC and no PT_INTERP too, but is not run as a program;
// -static-pie has PT_DYNAMIC and no interpreter, and is static all the same. Tell them apart
// by the type: an ET_EXEC without an interpreter, or an ET_DYN whose entry is set and that
// has no interpreter (a library's entry point is 0 or it names its interpreter, as
// libc.so.6 does).
bool no_interpreter(Elf* elf) {
  GElf_Ehdr eh;
  size_t phnum = 0;
  if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
      elf_getphdrnum(elf, &phnum) != 0 || phnum == 0)
    return false;
  bool interp = false, dynamic = false;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph)) return false;
    interp |= ph.p_type == PT_INTERP;
    dynamic |= ph.p_type == PT_DYNAMIC;
  }
  return !interp && (eh.e_type == ET_EXEC || (dynamic && eh.e_entry != 0));
}

// What the symbol tables tell about the unwinder: defined in the program, or imported.
struct UnwinderSymbols {
  bool defined = false;   // _Unwind_RaiseException defined here
  bool imported = false;  // an _Unwind_ function or a personality routine imported
};

void read_symbols(Elf* elf, Elf_Data* data, const GElf_Shdr& sh, HookProbes& p,
                  UnwinderSymbols& u) {
  for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
    const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (!name) continue;
    std::string_view n(name);
    if (n == "__fentry__") p.fentry = true;
    else if (n == "mcount" || n == "_mcount") p.mcount = true;
    else if (n == "__cyg_profile_func_enter") p.cyg = true;
    const bool undefined = sym.st_shndx == SHN_UNDEF;
    if (n == "_Unwind_RaiseException" && !undefined) u.defined = true;
    if (undefined && sh.sh_type == SHT_DYNSYM &&
        (n.rfind("_Unwind_", 0) == 0 || n.find("_personality_v0") != std::string_view::npos))
      u.imported = true;
  }
}

void read_first_library(Elf* elf, Elf_Data* data, const GElf_Shdr& sh,
                        std::optional<std::string>& first) {
  for (size_t i = 0; !first && i < sh.sh_size / sh.sh_entsize; ++i) {
    GElf_Dyn dyn;
    if (!gelf_getdyn(data, static_cast<int>(i), &dyn) || dyn.d_tag != DT_NEEDED) continue;
    const char* name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
    if (name && std::string_view(name).rfind("libasan.so", 0) == 0) first = name;
  }
}

}  // namespace

Result<ProgramElf> read_program_elf(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    if (elf) elf_end(elf);
    ::close(fd);
    return Error{path + ": not an ELF file"};
  }
  ProgramElf facts;
  facts.statically_linked = no_interpreter(elf);
  UnwinderSymbols unwinder;
  bool eh_tables = false;
  size_t shstrndx = 0;
  const bool names = elf_getshdrstrndx(elf, &shstrndx) == 0;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (const char* name = names ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr) {
      std::string_view n(name);
      eh_tables |= n == ".gcc_except_table";
      facts.sleds |= n == "__patchable_function_entries" || n == "__mcount_loc";
      facts.probes.xray |= n == "xray_instr_map";
    }
    if (sh.sh_entsize == 0) continue;
    Elf_Data* data = nullptr;
    if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB) {
      if ((data = elf_getdata(scn, nullptr))) read_symbols(elf, data, sh, facts.probes, unwinder);
    } else if (sh.sh_type == SHT_DYNAMIC) {
      if ((data = elf_getdata(scn, nullptr))) read_first_library(elf, data, sh, facts.first_library);
    }
  }
  // Without exception tables nothing can catch: an exception ends the program either way
  // (the runtime's rule, runtime/patching/own_unwinder.hpp).
  facts.own_unwinder =
      !facts.statically_linked && eh_tables && (unwinder.defined || !unwinder.imported);
  elf_end(elf);
  ::close(fd);
  return facts;
}

std::string describe_probes(const HookProbes& p) {
  std::string s;
  auto add = [&s](const char* what) { s += (s.empty() ? "" : " and ") + std::string(what); };
  if (p.fentry) add("-pg -mfentry");
  if (p.mcount) add("-pg");
  if (p.cyg) add("-finstrument-functions");
  if (p.xray) add("XRay sleds");
  return s.empty() ? "no callmon hook" : s;
}

}  // namespace callmon::tools
