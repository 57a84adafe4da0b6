// The dl* functions of the other link namespaces (docs/patching.md, "Other link
// namespaces"). A module dlmopen'ed into another namespace loads further modules with that
// namespace's libc dlopen (into that namespace), which the preloaded runtime does not
// interpose: nothing would ask for a pass, and those modules would stay unpatched until the
// program's own next dlopen. So the sled pass points each such module's JUMP_SLOT words of
// dlopen, dlmopen, dlsym and dlclose at trampolines (arch/x86_64/ns_dl_trampolines.S) that
// do what the base namespace's interposers do (ask for a pass; run a pending one before
// dlsym returns; the module lines around dlclose) and then jump to that namespace's own
// function, the caller's return address untouched.
#pragma once

#include <cstddef>
#include <cstdint>

struct dl_phdr_info;

namespace callmon::rt {

// Redirects the dl* GOT words of the module of another namespace that `info` describes
// (dynamic section `dyn`). Only from inside for_each_other_namespace_module's visit
// (namespace_walk.hpp: it looks the real functions up in that namespace), under the sled
// pass's lock. A word bound to anything but that namespace's definition is left alone, and
// so are GLOB_DAT words (`&dlopen` reads them too). At most kNsDlSlots distinct real
// functions per name in the process's life (one per namespace libc load address); beyond,
// words are left alone (counted: namespace_dl_full).
void namespace_dl_redirect(const dl_phdr_info* info, const void* dyn);

constexpr unsigned kNsDlSlots = 16;  // ns_dl_trampolines.S has this many per function

// Words left alone because the table was full.
unsigned namespace_dl_full();

}  // namespace callmon::rt
