// Attach: correcting the held `--patch` meta lines (see attach_meta.hpp).
#include "runtime/patching/attach_meta.hpp"

#include <string.h>

#include "runtime/core/sys.hpp"
#include "runtime/patching/entry_patch.hpp"

namespace callmon::rt {

namespace {

int g_held = 0;  // 1: lines held; exchanged to 0 by the one release

}  // namespace

void attach_meta_hold() {
  __atomic_store_n(&g_held, 1, __ATOMIC_RELEASE);
  entry_patch_hold_meta(true);
}

void attach_meta_release(const AttachSites* sites) {
  if (!__atomic_load_n(&g_held, __ATOMIC_ACQUIRE) || !__atomic_exchange_n(&g_held, 0, __ATOMIC_ACQ_REL))
    return;
  // The entry jumps the tool neutralised (few: one per function a handler returns into).
  uint64_t dropped[64];
  unsigned n = 0;
  for (uint32_t i = 0; sites && i < sites->count && n < 64; ++i) {
    const attach_abi::Patch& p = sites->patches[i];
    if (p.kind == attach_abi::kEntryJump && p.len &&
        memcmp(p.old_bytes, p.new_bytes, sizeof p.old_bytes) == 0)
      dropped[n++] = p.addr;
  }
  if (n) entry_patch_drop_patched(dropped, n, kDroppedReason);
  entry_patch_hold_meta(false);
  entry_patch_flush_meta();
}

}  // namespace callmon::rt
