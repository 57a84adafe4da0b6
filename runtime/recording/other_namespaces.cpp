// put_other_namespace_lines (other_namespaces.hpp): the other namespaces' modules come from
// namespace_walk.hpp; those the sled pass could not record (namespace_patch.hpp) are said.
#include "runtime/recording/other_namespaces.hpp"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>

#include "runtime/core/sys.hpp"
#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/namespace_patch.hpp"
#include "runtime/patching/namespace_walk.hpp"
#include "runtime/recording/process.hpp"

namespace callmon::rt {
namespace {

// Modules said so far, by load address and dynamic section (a module freed by dlclose and
// another loaded at another address is said again). Beyond this many, no more lines.
constexpr unsigned kMaxSaid = 64;
struct Said {
  uintptr_t base;
  const void* dyn;
};
Said g_said[kMaxSaid];
unsigned g_said_count = 0;
// Modules recorded (`dlmopen-recorded` lines written), likewise.
Said g_recorded[kMaxSaid];
unsigned g_recorded_count = 0;

bool in(const Said* list, unsigned count, uintptr_t base, const void* dyn) {
  for (unsigned i = 0; i < count; ++i)
    if (list[i].base == base && list[i].dyn == dyn) return true;
  return false;
}

bool said(uintptr_t base, const void* dyn) { return in(g_said, g_said_count, base, dyn); }

// A module the sled pass recorded: recorded from the end of its load only, its
// constructors' calls (made inside the dlmopen or dlopen, before any pass could run) not.
void say_recorded(uintptr_t base, const void* dyn, const char* name) {
  if (in(g_recorded, g_recorded_count, base, dyn) || g_recorded_count == kMaxSaid) return;
  g_recorded[g_recorded_count++] = Said{base, dyn};
  char line[PATH_MAX + 32];
  LineBuf b(line, sizeof line);
  b.str("dlmopen-recorded ").str(name).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
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

// Says the module if it was refused (sleds too) or imports a probe (with no sled pass run,
// as in an attached process).
void say(uintptr_t base, const void* dyn, const char* name, bool refused) {
  bool instrumented = refused;
  if (!instrumented) for_each_got_slot(base, dyn, probe_slot, &instrumented);
  if (!instrumented || g_said_count == kMaxSaid) return;
  g_said[g_said_count++] = Said{base, dyn};
  char line[PATH_MAX + 32];
  LineBuf b(line, sizeof line);
  b.str("dlmopen-module ").str(name).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

// A module of another namespace (namespace_walk.hpp): said once, unless the sled pass
// recorded it (namespace_patch.hpp).
int visit(dl_phdr_info* info, size_t, void*) {
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      const void* dyn = reinterpret_cast<const void*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
      NsState st = namespace_module_state(info->dlpi_addr, dyn);
      if (st == kNsRecorded) say_recorded(info->dlpi_addr, dyn, info->dlpi_name);
      else if (!said(info->dlpi_addr, dyn))
        say(info->dlpi_addr, dyn, info->dlpi_name, st == kNsRefused);
    }
  return 0;
}

}  // namespace

void put_other_namespace_lines() { for_each_other_namespace_module(visit, nullptr); }

}  // namespace callmon::rt
