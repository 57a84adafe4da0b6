// namespace_dl_redirect (namespace_dl.hpp): the table of the other namespaces' real dl*
// functions that the trampolines of ns_dl_trampolines.S jump to, and the GOT words.
#include "runtime/patching/namespace_dl.hpp"

#include <elf.h>
#include <link.h>
#include <string.h>

#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/got_symbols.hpp"
#include "runtime/patching/module_span.hpp"
#include "runtime/patching/namespace_walk.hpp"

// Column k (0 dlopen, 1 dlmopen, 2 dlsym, 3 dlclose), row i: the function the i-th
// trampoline of that column jumps to. Written once per row, before the first GOT word that
// leads to it is stored (x86-64 keeps stores in order; the release store says so).
extern "C" {
__attribute__((visibility("hidden"))) uintptr_t callmon_ns_dl_real[4 * callmon::rt::kNsDlSlots];
}
extern "C" char callmon_ns_tramps_0[], callmon_ns_tramps_1[], callmon_ns_tramps_2[],
    callmon_ns_tramps_3[];

namespace callmon::rt {
namespace {

const char* const kNames[4] = {"dlopen", "dlmopen", "dlsym", "dlclose"};
constexpr uintptr_t kTrampStride = 16;  // ns_dl_trampolines.S: .balign 16 each
unsigned g_full = 0;

uintptr_t tramps(int kind) {
  char* const t[4] = {callmon_ns_tramps_0, callmon_ns_tramps_1, callmon_ns_tramps_2,
                      callmon_ns_tramps_3};
  return reinterpret_cast<uintptr_t>(t[kind]);
}

int kind_of(const char* name) {
  for (int k = 0; k < 4; ++k)
    if (strcmp(name, kNames[k]) == 0) return k;
  return -1;
}

bool is_trampoline(uintptr_t v) {
  for (int k = 0; k < 4; ++k)
    if (v >= tramps(k) && v < tramps(k) + kNsDlSlots * kTrampStride) return true;
  return false;
}

// The row of column `kind` holding `real`, a new one if none does; kNsDlSlots if full.
unsigned row_of(int kind, uintptr_t real) {
  uintptr_t* col = callmon_ns_dl_real + kind * kNsDlSlots;
  for (unsigned i = 0; i < kNsDlSlots; ++i) {
    uintptr_t v = __atomic_load_n(&col[i], __ATOMIC_RELAXED);
    if (v == real) return i;
    if (v == 0) {
      __atomic_store_n(&col[i], real, __ATOMIC_RELEASE);
      return i;
    }
  }
  return kNsDlSlots;
}

struct Ctx {
  uintptr_t lo, hi;  // the module's mapped range: a lazy word points at its PLT
  DynTables own;
};

void redirect(const GotSlot& s, void* p) {
  const Ctx& c = *static_cast<const Ctx*>(p);
  if (!s.name || s.type != R_X86_64_JUMP_SLOT) return;
  const int kind = kind_of(s.name);
  if (kind < 0) return;
  const uintptr_t cur = __atomic_load_n(s.slot, __ATOMIC_RELAXED);
  if (is_trampoline(cur)) return;
  const uintptr_t real = namespace_symbol(s.name, dyn_needed_version(c.own, s.name));
  if (!real) return;
  const bool lazy = cur >= c.lo && cur < c.hi;
  if (!lazy && cur != real) return;  // bound to something else (an interposer of its own)
  const unsigned row = row_of(kind, real);
  if (row == kNsDlSlots) {
    ++g_full;
    return;
  }
  store_got_slot(s.slot, tramps(kind) + row * kTrampStride);
}

}  // namespace

void namespace_dl_redirect(const dl_phdr_info* info, const void* dyn) {
  Ctx c{UINTPTR_MAX, 0, dyn_tables(info->dlpi_addr, dyn)};
  module_span(info, &c.lo, &c.hi);
  if (c.lo >= c.hi) return;
  for_each_got_slot(info->dlpi_addr, dyn, redirect, &c);
}

unsigned namespace_dl_full() { return g_full; }

}  // namespace callmon::rt
