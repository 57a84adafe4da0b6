// The entry and library-call passes' writes, listed for the tool (see attach_collect.hpp).
#include "runtime/patching/attach_collect.hpp"

#include <string.h>

namespace callmon::rt {

namespace {
AttachSites* g_out = nullptr;
}  // namespace

AttachSites* attach_collect_begin(AttachSites* out) {
  AttachSites* prev = g_out;
  g_out = out;
  return prev;
}
void attach_collect_end(AttachSites* prev) { g_out = prev; }
bool attach_collecting() { return g_out != nullptr; }

bool attach_list_entry(uintptr_t site, uintptr_t tramp_entry, uintptr_t copy, const Relocated& r) {
  if (!g_out || g_out->failure) return false;
  attach_abi::Patch* p = attach_sites_next(g_out);
  if (!p) return false;
  p->addr = site;
  p->len = static_cast<uint32_t>(kPatchJmpLen);
  p->kind = attach_abi::kEntryJump;
  memcpy(p->old_bytes, reinterpret_cast<const void*>(site), kPatchJmpLen);
  p->new_bytes[0] = 0xe9;
  const auto rel = static_cast<int32_t>(static_cast<intptr_t>(tramp_entry - (site + kPatchJmpLen)));
  memcpy(p->new_bytes + 1, &rel, 4);
  p->copy = copy;
  p->displaced = static_cast<uint8_t>(r.displaced);
  p->boundaries = r.bounds;
  memcpy(p->from, r.bound_from, sizeof p->from);
  memcpy(p->to, r.bound_to, sizeof p->to);
  ++g_out->entries;
  return true;
}

bool attach_list_xray(uintptr_t site, const uint8_t* old_bytes, const uint8_t* new_bytes) {
  if (!g_out || g_out->failure) return false;
  attach_abi::Patch* p = attach_sites_next(g_out);
  if (!p) return false;
  p->addr = site;
  p->len = 11;
  p->kind = attach_abi::kXraySled;
  memcpy(p->old_bytes, old_bytes, 11);
  memcpy(p->new_bytes, new_bytes, 11);
  ++g_out->xray;
  return true;
}

bool attach_list_libcall(uintptr_t* slot, uintptr_t now, uintptr_t stub) {
  if (!g_out || g_out->failure) return false;
  const auto addr = reinterpret_cast<uintptr_t>(slot);
  if (attach_sites_has_word(g_out, addr)) return false;
  attach_abi::Patch* p = attach_sites_next(g_out);
  if (!p) return false;
  p->addr = addr;
  p->len = 8;
  p->kind = attach_abi::kLibcallWord;
  memcpy(p->old_bytes, &now, 8);
  memcpy(p->new_bytes, &stub, 8);
  ++g_out->libcalls;
  return true;
}

}  // namespace callmon::rt
