// The modules of the link namespaces other than the base one (dlmopen; docs/runtime.md,
// "dlmopen"). glibc's dl_iterate_phdr lists the caller's namespace only, and the runtime is
// preloaded into the base one, so the passes that patch and name modules (sleds, --patch,
// the hooks' GOT words, `module` lines) walk the other namespaces through this.
#pragma once

#include <cstddef>
#include <elf.h>

#include <cstdint>

struct dl_phdr_info;
struct link_map;

namespace callmon::rt {

// Calls visit(info, sizeof *info, ctx) for each module of every namespace but the base one,
// as dl_iterate_phdr would for that namespace: dlpi_addr, dlpi_name (the path it was loaded
// by), dlpi_phdr/phnum (read from its ELF header, checked against its dynamic section),
// dlpi_adds/subs (the loader's counters, common to all namespaces); no TLS fields. A module
// also loaded in the base namespace (the dynamic loader, shared by every namespace) is left
// out. Found as debuggers find them: the program's DT_DEBUG r_debug, whose r_next (glibc
// 2.35 on, r_version 2) chains each other namespace's. Runs inside dl_iterate_phdr, whose
// lock keeps the lists still; so `visit` must not dlopen/dlclose. A non-zero return from
// visit stops the walk. Nothing with glibc before 2.35.
void for_each_other_namespace_module(int (*visit)(dl_phdr_info*, size_t, void*), void* ctx);

// From inside `visit` only (the lists held still): the address the loader would bind the
// current module's reference to `name` (with `version`, nullptr: unversioned) to, looking
// in the module's own namespace in its load order (the module, its dependencies, that
// namespace's libc); 0 if none defines it or the definition is an ifunc. For the dl*
// functions of that namespace's libc (namespace_dl.hpp).
uintptr_t namespace_symbol(const char* name, const char* version);

// The same look-up, giving the definition itself: its module (link_map) and its dynamic
// symbol (a function, an ifunc, or anything else); false if no module of the namespace
// defines it. From inside `visit` only.
bool namespace_definition(const char* name, const char* version, const link_map** def,
                          const Elf64_Sym** sym);

}  // namespace callmon::rt
