// for_each_other_namespace_module (namespace_walk.hpp). glibc's `_r_debug` symbol cannot be
// used: a program that refers to it holds a copy-relocated snapshot of its first fields; the
// program's DT_DEBUG word is what the loader keeps pointing at the live structure. The
// public link_map has no program headers, so they are read from the module's ELF header,
// found at its load bias (a shared object's first segment starts at address 0), and only
// believed when the page is mapped and its PT_DYNAMIC is the link map's l_ld.
#include "runtime/patching/namespace_walk.hpp"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/patching/got_symbols.hpp"

namespace callmon::rt {
namespace {

// Whether [p, p + len) lies in mapped pages (mincore fails with ENOMEM on a hole).
bool mapped(uintptr_t p, size_t len) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = p & ~(page - 1);
  unsigned char vec[4];
  size_t span = p + len - start;
  if (span > sizeof vec * page) return false;
  return mincore(reinterpret_cast<void*>(start), span, vec) == 0;
}

// The program headers of the module of link map `l`, or nullptr.
const ElfW(Phdr)* phdrs_of(const link_map* l, int* count) {
  const uintptr_t base = l->l_addr;
  if (!base || !l->l_ld || !mapped(base, sizeof(ElfW(Ehdr)))) return nullptr;
  const auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(base);
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_type != ET_DYN ||
      eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum == 0)
    return nullptr;
  const uintptr_t ph = base + eh->e_phoff;
  if (!mapped(ph, eh->e_phnum * sizeof(ElfW(Phdr)))) return nullptr;
  const auto* phdr = reinterpret_cast<const ElfW(Phdr)*>(ph);
  for (int i = 0; i < eh->e_phnum; ++i)
    if (phdr[i].p_type == PT_DYNAMIC &&
        base + phdr[i].p_vaddr == reinterpret_cast<uintptr_t>(l->l_ld)) {
      *count = eh->e_phnum;
      return phdr;
    }
  return nullptr;
}

// The namespace whose modules `walk` is visiting (namespace_symbol).
const r_debug_extended* g_current_ns = nullptr;

struct Walk {
  int (*visit)(dl_phdr_info*, size_t, void*);
  void* ctx;
};

bool in_base(const r_debug_extended* base, const link_map* l) {
  for (const link_map* b = base->base.r_map; b; b = b->l_next)
    if (b->l_ld == l->l_ld) return true;
  return false;
}

// dl_iterate_phdr's first object is the program: its DT_DEBUG leads to the namespaces.
int walk(dl_phdr_info* program, size_t, void* p) {
  const Walk& w = *static_cast<const Walk*>(p);
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < program->dlpi_phnum; ++i)
    if (program->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(program->dlpi_addr + program->dlpi_phdr[i].p_vaddr);
  const r_debug_extended* base = nullptr;
  for (; dyn && dyn->d_tag != DT_NULL; ++dyn)
    if (dyn->d_tag == DT_DEBUG) base = reinterpret_cast<const r_debug_extended*>(dyn->d_un.d_ptr);
  if (!base || base->base.r_version < 2) return 1;  // one namespace (or an older glibc)
  for (const r_debug_extended* ns = base->r_next; ns; ns = ns->r_next)
    for (link_map* l = ns->base.r_map; l; l = l->l_next) {
      g_current_ns = ns;
      if (!l->l_name || !l->l_name[0] || in_base(base, l)) continue;
      dl_phdr_info info{};
      int phnum = 0;
      info.dlpi_phdr = phdrs_of(l, &phnum);
      if (!info.dlpi_phdr) continue;
      info.dlpi_phnum = static_cast<ElfW(Half)>(phnum);
      info.dlpi_addr = l->l_addr;
      info.dlpi_name = l->l_name;
      info.dlpi_adds = program->dlpi_adds;
      info.dlpi_subs = program->dlpi_subs;
      const int stop = w.visit(&info, sizeof info, w.ctx);
      g_current_ns = nullptr;
      if (stop != 0) return 1;
    }
  g_current_ns = nullptr;
  return 1;  // the program only
}

}  // namespace

bool namespace_definition(const char* name, const char* version, const link_map** def,
                          const Elf64_Sym** sym) {
  if (!g_current_ns) return false;
  for (const link_map* l = g_current_ns->base.r_map; l; l = l->l_next) {
    if (!l->l_ld || (l->l_name && strstr(l->l_name, "linux-vdso"))) continue;
    const Elf64_Sym* s = dyn_lookup_version(dyn_tables(l->l_addr, l->l_ld), name, version);
    if (!s) continue;
    *def = l;
    *sym = s;
    return true;
  }
  return false;
}

uintptr_t namespace_symbol(const char* name, const char* version) {
  const link_map* l = nullptr;
  const Elf64_Sym* s = nullptr;
  if (!namespace_definition(name, version, &l, &s)) return 0;
  if (ELF64_ST_TYPE(s->st_info) != STT_FUNC) return 0;  // an ifunc: not resolved here
  return l->l_addr + s->st_value;
}

void for_each_other_namespace_module(int (*visit)(dl_phdr_info*, size_t, void*), void* ctx) {
  Walk w{visit, ctx};
  dl_iterate_phdr(walk, &w);
}

}  // namespace callmon::rt
