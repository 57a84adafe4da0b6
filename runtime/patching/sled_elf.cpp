// Reads the sled lists of a loaded module (see sled_elf.hpp).
#include "runtime/patching/sled_elf.hpp"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace callmon::rt {

namespace {

int prot_of(uint32_t flags) {
  return ((flags & PF_R) ? PROT_READ : 0) | ((flags & PF_W) ? PROT_WRITE : 0) |
         ((flags & PF_X) ? PROT_EXEC : 0);
}

bool is_pg_hook(const char* name) {
  return !strcmp(name, "__fentry__") || !strcmp(name, "mcount") || !strcmp(name, "_mcount");
}

bool is_unwinder_import(const char* name) {
  return !strncmp(name, "_Unwind_", 8) || strstr(name, "_personality_v0") != nullptr;
}

// Reads a symbol table: `syms` with `n` entries, names in `names` (`names_size` bytes).
// From .dynsym: whether it imports a -pg hook (__fentry__, mcount, _mcount) or an unwinder
// function, and defines _Unwind_RaiseException (exports_raise); from .symtab only the
// definition (hides_raise).
void read_symbols(const ElfW(Sym)* syms, size_t n, const char* names, size_t names_size,
                  bool dynamic, bool unwinder, SledModule* out) {
  for (size_t i = 1; i < n; ++i) {
    if (syms[i].st_name >= names_size) continue;
    const char* name = names + syms[i].st_name;
    if (syms[i].st_shndx == SHN_UNDEF) {
      if (!dynamic) continue;
      if (is_pg_hook(name)) out->imports_pg = true;
      if (unwinder && is_unwinder_import(name)) out->imports_unwinder = true;
    } else if (unwinder && !strcmp(name, "_Unwind_RaiseException")) {
      (dynamic ? out->exports_raise : out->hides_raise) = true;
    }
  }
}

// `name` (with `room` bytes left in the string table) is `want`, NUL included.
bool name_is(const char* name, size_t room, const char* want) {
  size_t n = strlen(want);
  return room > n && memcmp(name, want, n + 1) == 0;
}

bool parse(const uint8_t* file, size_t size, const dl_phdr_info* info, SledModule* out) {
  if (size < sizeof(ElfW(Ehdr)) || memcmp(file, ELFMAG, SELFMAG) != 0 ||
      file[EI_CLASS] != ELFCLASS64)
    return false;
  auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(file);
  if (eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0 || eh->e_shnum == 0 ||
      eh->e_shstrndx >= eh->e_shnum ||
      eh->e_shoff + static_cast<uint64_t>(eh->e_shnum) * sizeof(ElfW(Shdr)) > size)
    return false;
  auto* sh = reinterpret_cast<const ElfW(Shdr)*>(file + eh->e_shoff);
  const ElfW(Shdr)& strs = sh[eh->e_shstrndx];
  if (strs.sh_offset + strs.sh_size > size) return false;
  auto* names = reinterpret_cast<const char*>(file + strs.sh_offset);
  uintptr_t bias = info->dlpi_addr;
  int dynsym = -1, symtab = -1;
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_name >= strs.sh_size) continue;
    const char* name = names + sh[i].sh_name;
    size_t room = strs.sh_size - sh[i].sh_name;
    if (sh[i].sh_type == SHT_DYNSYM) dynsym = i;
    if (sh[i].sh_type == SHT_SYMTAB) symtab = i;
    if (name_is(name, room, ".gcc_except_table")) out->eh_tables = true;
    if (name_is(name, room, "xray_instr_map") && (sh[i].sh_flags & SHF_ALLOC) &&
        sh[i].sh_type != SHT_NOBITS && sh[i].sh_size) {
      out->xray_map = reinterpret_cast<const uint8_t*>(bias + sh[i].sh_addr);
      out->xray_size = sh[i].sh_size;
      out->xray_link_addr = sh[i].sh_addr;
    }
    bool sled = name_is(name, room, "__mcount_loc") ||
                name_is(name, room, "__patchable_function_entries");
    // Only allocated lists are in memory (an object file's would not be; a linked
    // module's always are).
    if (!sled || !(sh[i].sh_flags & SHF_ALLOC) || sh[i].sh_type == SHT_NOBITS) continue;
    if (out->list_count == kMaxSledLists) continue;
    out->lists[out->list_count++] = {reinterpret_cast<const uintptr_t*>(bias + sh[i].sh_addr),
                                     sh[i].sh_size / sizeof(uintptr_t), sh[i].sh_addr};
  }
  // .dynsym and its strings are allocated: read in memory; .symtab from the file.
  if (dynsym >= 0 && sh[dynsym].sh_link < eh->e_shnum) {
    const ElfW(Shdr)& syms = sh[dynsym];
    const ElfW(Shdr)& strings = sh[syms.sh_link];
    if (syms.sh_entsize == sizeof(ElfW(Sym)) && syms.sh_addr && strings.sh_addr)
      read_symbols(reinterpret_cast<const ElfW(Sym)*>(bias + syms.sh_addr),
                   syms.sh_size / sizeof(ElfW(Sym)),
                   reinterpret_cast<const char*>(bias + strings.sh_addr), strings.sh_size, true,
                   out->eh_tables, out);
  }
  if (out->eh_tables && symtab >= 0 && sh[symtab].sh_link < eh->e_shnum) {
    const ElfW(Shdr)& syms = sh[symtab];
    const ElfW(Shdr)& strings = sh[syms.sh_link];
    if (syms.sh_entsize == sizeof(ElfW(Sym)) && syms.sh_offset + syms.sh_size <= size &&
        strings.sh_offset + strings.sh_size <= size)
      read_symbols(reinterpret_cast<const ElfW(Sym)*>(file + syms.sh_offset),
                   syms.sh_size / sizeof(ElfW(Sym)),
                   reinterpret_cast<const char*>(file + strings.sh_offset), strings.sh_size,
                   false, true, out);
  }
  return true;
}

}  // namespace

bool sled_read_module(const dl_phdr_info* info, const char* path, SledModule* out) {
  memset(out, 0, sizeof *out);
  for (int i = 0; i < info->dlpi_phnum && out->exec_count < kMaxExecSegments; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t a = info->dlpi_addr + ph.p_vaddr;
    out->exec[out->exec_count++] = {a & ~(page - 1), (a + ph.p_memsz + page - 1) & ~(page - 1),
                                    prot_of(ph.p_flags)};
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = false;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    size_t size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      ok = parse(static_cast<const uint8_t*>(map), size, info, out);
      munmap(map, size);
    }
  }
  close(fd);
  return ok;
}

}  // namespace callmon::rt
