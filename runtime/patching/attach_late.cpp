// Attach: the late sites the tool writes with every thread stopped (see attach_late.hpp).
#include "runtime/patching/attach_late.hpp"

#include <string.h>

#include "runtime/core/sys.hpp"
#include "runtime/patching/entry_patch.hpp"
#include "runtime/recording/process.hpp"

namespace callmon::rt {

namespace {

// The batch the tool reads is g_late[0, posted); sites queued while it is posted follow it.
constexpr uint32_t kMaxLate = 8192;
attach_abi::Patch g_late[kMaxLate];
uint32_t g_posted = 0;  // entries the tool owns (DlSync::late_count), 0 when none posted
uint32_t g_queued = 0;  // entries in g_late, posted ones included
constexpr unsigned kMaxKeep = 256;
void* g_keep[kMaxKeep];    // references of the modules of posted sites
unsigned g_keep_count = 0;
unsigned g_keep_posted = 0;  // of which those of the posted batch (the first ones)
bool g_holding = false;      // the entry pass's meta lines wait

constexpr const char* kLeftReason =
    "not written at the late stop (its bytes had changed, a signal handler returns into them, "
    "or the detach came first)";

void post(attach_abi::DlSync* sync) {
  g_posted = g_queued;
  g_keep_posted = g_keep_count;
  sync->late = reinterpret_cast<uint64_t>(g_late);
  sync->late_count = g_posted;
  __atomic_store_n(&sync->late_state, 1u, __ATOMIC_RELEASE);  // last: the tool reads after
}

void release_meta() {
  if (!g_holding || g_queued) return;
  g_holding = false;
  entry_patch_hold_meta(false);
  entry_patch_flush_meta();
}

// Removes the list entry at `addr` (a posted site the tool did not write).
void drop_site(AttachSites* sites, uint64_t addr) {
  for (uint32_t k = 0; k < sites->count; ++k)
    if (sites->patches[k].addr == addr) {
      memmove(&sites->patches[k], &sites->patches[k + 1],
              (sites->count - k - 1) * sizeof(attach_abi::Patch));
      --sites->count;
      return;
    }
}

}  // namespace

void attach_late_reset(attach_abi::DlSync* sync) {
  g_posted = g_queued = 0;
  g_keep_count = g_keep_posted = 0;  // the last detach dropped them (attach_late_fold)
  sync->late = 0;
  sync->late_count = 0;
  sync->late_ns = 0;
  __atomic_store_n(&sync->late_state, 0u, __ATOMIC_RELEASE);
}

void attach_late_hold_meta() {
  if (g_holding) return;
  g_holding = true;
  entry_patch_hold_meta(true);
}

bool attach_late_queue(const attach_abi::Patch& p) {
  if (g_queued == kMaxLate) return false;
  g_late[g_queued++] = p;
  return true;
}

bool attach_late_keep(void* handle) {
  if (g_keep_count == kMaxKeep) return false;
  g_keep[g_keep_count++] = handle;
  return true;
}

void attach_late_post(attach_abi::DlSync* sync) {
  if (g_queued && !g_posted) post(sync);
  release_meta();
}

unsigned attach_late_fold(attach_abi::DlSync* sync, AttachSites* sites, bool detaching,
                          void** drop, unsigned cap) {
  const uint32_t state = __atomic_load_n(&sync->late_state, __ATOMIC_ACQUIRE);
  if (!g_posted && !(detaching && g_queued)) return 0;
  if (g_posted && state != 2 && !detaching) return 0;  // the tool's still
  // A batch the tool never answered (the detach came first) was not written at all.
  const bool answered = g_posted && state == 2;
  const uint32_t done = detaching ? g_queued : g_posted;
  uint64_t left_entries[512];
  unsigned n_left_entries = 0;
  uint32_t written = 0, left = 0;
  for (uint32_t i = 0; i < done; ++i) {
    attach_abi::Patch& p = g_late[i];
    if (answered && i < g_posted && p.len) {
      ++written;
      continue;
    }
    ++left;
    drop_site(sites, p.addr);
    if (p.kind == attach_abi::kEntryJump && n_left_entries < 512)
      left_entries[n_left_entries++] = p.addr;
  }
  if (n_left_entries) entry_patch_drop_patched(left_entries, n_left_entries, kLeftReason);
  char line[128];
  LineBuf b(line, sizeof line);
  b.str("late-stop ").dec(written).ch(' ').dec(left).ch(' ').dec(answered ? sync->late_ns : 0).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  // The references of the sites answered go; those of sites queued since stay with them.
  const unsigned keep_done = detaching ? g_keep_count : g_keep_posted;
  unsigned n = 0;
  for (unsigned i = 0; i < keep_done && n < cap; ++i) drop[n++] = g_keep[i];
  memmove(g_keep, g_keep + keep_done, (g_keep_count - keep_done) * sizeof(void*));
  g_keep_count -= keep_done;
  memmove(g_late, g_late + done, (g_queued - done) * sizeof(attach_abi::Patch));
  g_queued -= done;
  g_posted = 0;
  g_keep_posted = 0;
  sync->late_count = 0;
  __atomic_store_n(&sync->late_state, 0u, __ATOMIC_RELEASE);
  if (g_queued && !detaching) post(sync);
  release_meta();
  return n;
}

}  // namespace callmon::rt
