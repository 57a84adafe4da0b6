// put_other_namespace_lines (other_namespaces.hpp): the namespaces are found as debuggers
// find them, through the program's DT_DEBUG entry: the base namespace's r_debug, whose
// r_next (glibc 2.35 on, r_version 2) chains the r_debug of every other namespace, each
// with its list of link maps. Glibc's own `_r_debug` symbol cannot be used: a program that
// refers to it holds a copy-relocated snapshot of its first fields.
#include "runtime/recording/other_namespaces.hpp"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>

#include "runtime/core/sys.hpp"
#include "runtime/patching/got_slots.hpp"
#include "runtime/recording/process.hpp"

namespace callmon::rt {
namespace {

// Modules said so far, by link map and load address (a map freed by dlclose and reused for
// another module at another address is said again). Beyond this many, no more lines.
constexpr unsigned kMaxSaid = 64;
struct Said {
  const link_map* map;
  uintptr_t base;
};
Said g_said[kMaxSaid];
unsigned g_said_count = 0;

bool said(const link_map* l) {
  for (unsigned i = 0; i < g_said_count; ++i)
    if (g_said[i].map == l && g_said[i].base == l->l_addr) return true;
  return false;
}

// A probe a module built for callmon imports: -finstrument-functions, -pg, -pg -mfentry.
void probe_slot(const GotSlot& slot, void* found) {
  static const char* const kProbes[] = {"__cyg_profile_func_enter", "__cyg_profile_func_exit",
                                        "mcount", "_mcount", "__fentry__"};
  for (const char* p : kProbes) {
    const char* a = slot.name;
    if (!a) return;
    const char* b = p;
    while (*a && *a == *b) ++a, ++b;
    if (*a == 0 && *b == 0) *static_cast<bool*>(found) = true;
  }
}

void say(const link_map* l) {
  bool instrumented = false;
  if (l->l_ld) for_each_got_slot(l->l_addr, l->l_ld, probe_slot, &instrumented);
  if (!instrumented || g_said_count == kMaxSaid) return;
  g_said[g_said_count++] = Said{l, l->l_addr};
  char line[PATH_MAX + 32];
  LineBuf b(line, sizeof line);
  b.str("dlmopen-module ").str(l->l_name).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

// dl_iterate_phdr's first object is the program: its DT_DEBUG leads to the namespaces. Run
// under the loader's lock, which guards the link map lists (glibc adds to and removes from
// a namespace's list holding it).
int walk_namespaces(dl_phdr_info* info, size_t, void*) {
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  const r_debug_extended* base = nullptr;
  for (; dyn && dyn->d_tag != DT_NULL; ++dyn)
    if (dyn->d_tag == DT_DEBUG) base = reinterpret_cast<const r_debug_extended*>(dyn->d_un.d_ptr);
  if (!base || base->base.r_version < 2) return 1;  // one namespace (or an older glibc)
  for (const r_debug_extended* ns = base->r_next; ns; ns = ns->r_next)
    for (const link_map* l = ns->base.r_map; l; l = l->l_next)
      if (l->l_name && l->l_name[0] && !said(l)) say(l);
  return 1;  // the program only
}

}  // namespace

void put_other_namespace_lines() { dl_iterate_phdr(walk_namespaces, nullptr); }

}  // namespace callmon::rt
