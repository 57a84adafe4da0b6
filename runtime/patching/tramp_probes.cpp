// The calibration probes' trampolines (see tramp_probes.hpp).
#include "runtime/patching/tramp_probes.hpp"

#include <string.h>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/patching/attach_collect.hpp"
#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_cfi.hpp"
#include "runtime/patching/entry_tramp.hpp"

extern "C" void __fentry__();  // pg_entry.S

namespace callmon::rt {

void tramp_calibration_probes(uintptr_t entry, uintptr_t exit) {
  constexpr size_t kCount = 8;
  PgProbeSite probes[kCount];
  size_t count = pg_calibration_sites(reinterpret_cast<uintptr_t>(&__fentry__), probes, kCount);
  TrampPool pool;
  if (!count || !entry_pool_map(probes[0].site, probes[0].site + 4096, count, entry, exit, &pool))
    return;
  uintptr_t slots[kCount];
  size_t n = 0;
  for (; n < count; ++n) {
    uint8_t* slot = entry_pool_next(pool);
    if (!slot) break;
    // The copy: a jump back past the call of __fentry__.
    uint8_t jmp[5] = {0xe9};
    int32_t back = static_cast<int32_t>(static_cast<intptr_t>(
        probes[n].site + probes[n].len - reinterpret_cast<uintptr_t>(slot + kTrampCodeOffset + 5)));
    memcpy(jmp + 1, &back, 4);
    slots[n] = reinterpret_cast<uintptr_t>(entry_pool_take(&pool, probes[n].fn, !attach_collecting(), jmp, sizeof jmp));
  }
  if (!entry_pool_seal(&pool)) return;
  {
    RuntimeScope rs;  // libgcc's registration allocates with the program's malloc
    entry_cfi_register(pool);
  }
  for (size_t i = 0; i < n; ++i) write_rel32_text(probes[i].site, 0xe9, slots[i] + kTrampEntry);
}

}  // namespace callmon::rt
