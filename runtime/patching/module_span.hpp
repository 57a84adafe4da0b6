// The address range a loaded module's segments cover, from its program headers.
#pragma once

#include <link.h>

#include <cstdint>

namespace callmon::rt {

// [*lo, *hi) spanned by `info`'s PT_LOAD segments (their memory sizes); *lo >= *hi when it
// has none.
inline void module_span(const dl_phdr_info* info, uintptr_t* lo, uintptr_t* hi) {
  *lo = UINTPTR_MAX;
  *hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t a = info->dlpi_addr + ph.p_vaddr;
    if (a < *lo) *lo = a;
    if (a + ph.p_memsz > *hi) *hi = a + ph.p_memsz;
  }
}

}  // namespace callmon::rt
