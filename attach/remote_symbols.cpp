// Finding dlopen, dlsym, dlerror and the signal installers in an attached program (see
// remote_symbols.hpp).
#include "attach/remote_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace callmon::attach {
namespace {

// The file-offset-0 mapping's start of the first mapped file whose name starts with one of
// `prefixes` ("libc.so"), and its path.
bool find_module(pid_t pid, std::initializer_list<const char*> prefixes, std::string* path,
                 uint64_t* base) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string range, perms, offset, dev, inode, file;
    if (!(f >> range >> perms >> offset >> dev >> inode >> file) || file[0] != '/') continue;
    if (std::stoull(offset, nullptr, 16) != 0) continue;
    std::string name = file.substr(file.rfind('/') + 1);
    for (const char* p : prefixes)
      if (name.rfind(p, 0) == 0) {
        *path = file;
        *base = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        return true;
      }
  }
  return false;
}

}  // namespace

uint64_t elf_function_address(const std::string& path, uint64_t base, const std::string& name) {
  return elf_function_range(path, base, name, nullptr);
}

uint64_t elf_function_range(const std::string& path, uint64_t base, const std::string& name,
                            uint64_t* size_out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st {};
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(sizeof(Elf64_Ehdr)))
    map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return 0;
  const auto* bytes = static_cast<const uint8_t*>(map);
  const size_t size = static_cast<size_t>(st.st_size);
  uint64_t found = 0;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(bytes);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shoff + static_cast<uint64_t>(eh->e_shnum) * sizeof(Elf64_Shdr) <= size) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(bytes + eh->e_shoff);
    // The lowest PT_LOAD's address is the one mapped at `base` (0 for a shared library).
    uint64_t low = 0;
    if (eh->e_phoff + static_cast<uint64_t>(eh->e_phnum) * sizeof(Elf64_Phdr) <= size) {
      const auto* ph = reinterpret_cast<const Elf64_Phdr*>(bytes + eh->e_phoff);
      for (unsigned i = 0; i < eh->e_phnum; ++i)
        if (ph[i].p_type == PT_LOAD) {
          low = ph[i].p_vaddr & ~uint64_t{4095};
          break;
        }
    }
    for (unsigned i = 0; i < eh->e_shnum && !found; ++i) {
      if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& strs = sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > size || strs.sh_offset + strs.sh_size > size) continue;
      const auto* syms = reinterpret_cast<const Elf64_Sym*>(bytes + sh[i].sh_offset);
      const char* names = reinterpret_cast<const char*>(bytes + strs.sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
        const Elf64_Sym& s = syms[k];
        if (s.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s.st_info) != STT_FUNC ||
            s.st_name >= strs.sh_size)
          continue;
        if (name == names + s.st_name) {
          found = base + s.st_value - low;
          if (size_out) *size_out = s.st_size;
          break;
        }
      }
    }
  }
  munmap(map, size);
  return found;
}

Result<LoaderFunctions> find_loader_functions(pid_t pid) {
  std::string path;
  uint64_t base = 0;
  if (!find_module(pid, {"libc.so", "libc-"}, &path, &base))
    return Error{"process " + std::to_string(pid) + " has no C library mapped (a static or "
                 "non-glibc program): cannot load the runtime into it"};
  LoaderFunctions f;
  f.dlopen = elf_function_address(path, base, "dlopen");
  f.dlsym = elf_function_address(path, base, "dlsym");
  f.dlerror = elf_function_address(path, base, "dlerror");
  if (!f.dlopen || !f.dlsym) {
    std::string dl;
    uint64_t dl_base = 0;
    if (find_module(pid, {"libdl.so", "libdl-"}, &dl, &dl_base)) {
      f.dlopen = elf_function_address(dl, dl_base, "dlopen");
      f.dlsym = elf_function_address(dl, dl_base, "dlsym");
      f.dlerror = elf_function_address(dl, dl_base, "dlerror");
    }
  }
  if (!f.dlopen || !f.dlsym)
    return Error{"the C library of process " + std::to_string(pid) + " (" + path +
                 ") has no dlopen (glibc 2.34 or later has it, older ones in libdl.so.2, "
                 "which the program has not loaded)"};
  return f;
}

std::vector<CodeRange> find_installer_ranges(pid_t pid) {
  std::vector<CodeRange> out;
  std::string path;
  uint64_t base = 0;
  if (!find_module(pid, {"libc.so", "libc-"}, &path, &base)) return out;
  // The installers the runtime interposes, what they call inside libc (not through the
  // GOT), and the glibc entries that install through those internal calls.
  for (const char* name : {"sigaction", "__sigaction", "__libc_sigaction", "signal", "bsd_signal",
                           "ssignal", "sysv_signal", "__sysv_signal", "siginterrupt", "sigset",
                           "sigvec"}) {
    uint64_t size = 0;
    const uint64_t at = elf_function_range(path, base, name, &size);
    if (at && size) out.push_back({at, at + size});
  }
  return out;
}

}  // namespace callmon::attach
