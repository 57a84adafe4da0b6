// Attach: modules dlopen'ed while attached (see attach_dlopen.hpp). Why GOT words rather
// than the loader's r_debug notification (_dl_debug_state): docs/patching.md, "Modules
// loaded while attached".
#include "runtime/patching/attach_dlopen.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/signal_contexts.hpp"
#include "runtime/patching/attach_collect.hpp"
#include "runtime/patching/attach_late.hpp"
#include "runtime/patching/attach_meta.hpp"
#include "runtime/patching/attach_pins.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_patch.hpp"
#include "runtime/patching/got_redirect.hpp"
#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/module_span.hpp"
#include "runtime/recording/process.hpp"

namespace callmon::rt {

namespace {

// The runtime's wrappers (arch/x86_64/dl_trampolines.S, interpose_dlclose.cpp).
struct Wrapper {
  const char* name;
  uintptr_t own;
};
Wrapper g_wrappers[] = {{"dlopen", 0}, {"dlmopen", 0}, {"dlsym", 0}, {"dlclose", 0}};

// The modules whose patches are in the list (or who had none): the attach's, then each one
// a pass took. By load bias, program headers and name (a module dlclose'd behind our back
// and another loaded at its place has another name string).
struct Module {
  uintptr_t bias;
  const void* phdr;
  const char* name;
  uintptr_t lo, hi;  // its PT_LOAD segments, code and GOT
  bool live;
};
constexpr unsigned kMaxModules = 1024;
Module g_mods[kMaxModules];
unsigned g_mod_count = 0;
AttachSites* g_sites = nullptr;
bool g_frozen = false;  // the detach has read the list
int g_lock = 0;
attach_abi::DlSync g_sync;     // shared with the tool (attach_abi.hpp)
uint64_t g_poke_seen = 0;      // the tool's last poke acted upon
unsigned g_dl_gen_seen = 0;    // g_dl_generation at the last pass (a wrapper's dlopen since?)

void publish_count() { __atomic_store_n(&g_sync.count, g_sites ? g_sites->count : 0, __ATOMIC_RELEASE); }

// A module loaded behind the wrappers' back (a late pass: no redirected dlopen since the last
// pass) may already run in any thread. Only what a running thread cannot be caught inside of
// is written then: GOT words (aligned 8-byte stores) and a sled that is one 5-byte nop in one
// aligned 8-byte word (a single store). A gcc sled of five 1-byte nops may have a thread
// between its nops, and a function's first bytes (--patch) one inside its instructions:
// those are posted to the tool instead (attach_late.hpp), which writes them with every
// thread stopped, moving or stepping a thread out of them first, as the attach does.
bool safe_late(const attach_abi::Patch& p) {
  if (p.kind == attach_abi::kGotWord || p.kind == attach_abi::kLibcallWord) return true;
  // An XRay sled's bytes past its first two never run while those are XRay's: written
  // first, then the two in one aligned store (xray_sleds.cpp).
  if (p.kind == attach_abi::kXraySled) return (p.addr & 1) == 0;
  if (p.kind != attach_abi::kSledCall) return false;
  const uint8_t* b = p.old_bytes;
  return b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0x00 && (p.addr & 7) <= 3;
}

struct Lock {
  Lock() {
    while (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  }
  ~Lock() { __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE); }
};

Module* find(const dl_phdr_info* info) {
  for (unsigned i = 0; i < g_mod_count; ++i)
    if (g_mods[i].bias == info->dlpi_addr && g_mods[i].phdr == info->dlpi_phdr &&
        g_mods[i].name == info->dlpi_name)
      return &g_mods[i];
  return nullptr;
}

Module* add(const dl_phdr_info* info) {
  if (g_mod_count == kMaxModules) return nullptr;
  Module& m = g_mods[g_mod_count++];
  m = {info->dlpi_addr, info->dlpi_phdr, info->dlpi_name, ~uintptr_t{0}, 0, true};
  module_span(info, &m.lo, &m.hi);
  return &m;
}

bool in_module(const Module& m, uint64_t addr) { return addr >= m.lo && addr < m.hi; }

// Drops the list entries inside modules no longer loaded, and the modules.
void prune() {
  for (unsigned i = 0; i < g_mod_count; ++i) g_mods[i].live = false;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void*) {
    if (Module* m = find(info)) m->live = true;
    return 0;
  }, nullptr);
  unsigned kept = 0;
  for (unsigned i = 0; i < g_mod_count; ++i) {
    const Module& m = g_mods[i];
    if (m.live) {
      g_mods[kept++] = m;
      continue;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < g_sites->count; ++k)
      if (!in_module(m, g_sites->patches[k].addr)) g_sites->patches[n++] = g_sites->patches[k];
    g_sites->count = n;
  }
  g_mod_count = kept;
  publish_count();
}

// Writes one listed patch in-process, if the bytes are still the ones listed. Code: the
// page made writable (and still executable) around it, as the start-up passes do.
bool apply(const attach_abi::Patch& p) {
  if (memcmp(reinterpret_cast<const void*>(p.addr), p.old_bytes, p.len) != 0) return false;
  if (p.kind == attach_abi::kGotWord || p.kind == attach_abi::kLibcallWord) {
    uintptr_t v;
    memcpy(&v, p.new_bytes, 8);
    return store_got_slot(reinterpret_cast<uintptr_t*>(p.addr), v);
  }
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = p.addr & ~(page - 1);
  const uintptr_t hi = (p.addr + p.len + page - 1) & ~(page - 1);
  void* at = reinterpret_cast<void*>(lo);
  if (mprotect(at, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
  if (p.kind == attach_abi::kXraySled) {
    auto* b = reinterpret_cast<uint8_t*>(p.addr);
    memcpy(b + 2, p.new_bytes + 2, p.len - 2);
    uint16_t h;
    memcpy(&h, p.new_bytes, 2);
    if ((p.addr & 1) == 0) __atomic_store_n(reinterpret_cast<uint16_t*>(p.addr), h, __ATOMIC_RELEASE);
    else memcpy(b, p.new_bytes, 2);
  } else {
    int32_t rel;
    memcpy(&rel, p.new_bytes + 1, 4);
    write_rel32(p.addr, p.new_bytes[0], p.addr + 5 + static_cast<intptr_t>(rel));
  }
  mprotect(at, hi - lo, PROT_READ | PROT_EXEC);
  return true;
}

}  // namespace

void attach_dl_find_wrappers(void* self) {
  for (Wrapper& w : g_wrappers) w.own = reinterpret_cast<uintptr_t>(dlsym(self, w.name));
}

uintptr_t attach_dl_wrapper(const char* name) {
  for (const Wrapper& w : g_wrappers)
    if (strcmp(name, w.name) == 0) return w.own;
  return 0;
}

void attach_dl_begin(AttachSites* sites) {
  Lock l;
  g_sites = sites;
  g_frozen = false;
  g_mod_count = 0;
  g_poke_seen = __atomic_load_n(&g_sync.poke, __ATOMIC_ACQUIRE);
  __atomic_store_n(&g_sync.passed, g_poke_seen, __ATOMIC_RELEASE);
  g_dl_gen_seen = __atomic_load_n(&g_dl_generation, __ATOMIC_ACQUIRE);
  attach_late_reset(&g_sync);
  publish_count();
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void*) {
    if (attach_module_pinned(info)) add(info);  // else not listed: the first pass's
    return 0;
  }, nullptr);
}

namespace {

ModulePins g_pins;  // serialised by sled_patch_modules' lock, as the passes
constexpr unsigned kMaxDrop = 512;
void* g_drop[kMaxDrop];  // references the late stop no longer needs, dropped outside the lock
unsigned g_drop_count = 0;

// A late module's site no store can write (safe_late false): in the list, not written, and
// posted to the tool; the module kept mapped until it answers. False: left alone.
bool queue_for_tool(const attach_abi::Patch& p, const dl_phdr_info* info, bool* kept) {
  if (!*kept) {
    void* h = g_pins.keep(info);
    if (!h || !attach_late_keep(h)) {
      if (h && g_drop_count < kMaxDrop) g_drop[g_drop_count++] = h;
      return false;
    }
    *kept = true;
  }
  return attach_late_queue(p);
}

// Whether it found modules not seen before.
bool pass_locked() {
  if (g_frozen) return false;
  attach_meta_release(g_sites);  // after the stop: the attach's held lines, corrected
  // The tool's answer to the sites posted before (attach_late.hpp).
  g_drop_count += attach_late_fold(&g_sync, g_sites, false, g_drop + g_drop_count,
                                   kMaxDrop - g_drop_count);
  prune();
  // Late: no dlopen through a redirected word since the last pass (attach_dl_poked).
  const unsigned gen = __atomic_load_n(&g_dl_generation, __ATOMIC_ACQUIRE);
  const bool late = gen == g_dl_gen_seen;
  g_dl_gen_seen = gen;
  const unsigned first_mod = g_mod_count;
  const uint32_t first = g_sites->count;
  g_sites->failure = nullptr;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void*) {
    if (find(info) || !attach_module_pinned(info) || !add(info)) return 0;
    attach_collect_module(info, g_sites);
    return 0;
  }, nullptr);
  if (g_mod_count == first_mod) return false;
  // --patch and library calls: listed as at the attach (each pass keeps its own table of
  // the modules it has seen; only the new ones' entries are kept below).
  // A late module's function entries are listed too, their meta lines held until the tool
  // says which jumps it wrote.
  if (late) attach_late_hold_meta();
  attach_collect_begin(g_sites);
  entry_patch_modules();
  libcall_patch_modules();
  attach_collect_end();
  entry_patch_flush_meta();
  uint32_t n = first;
  bool kept[kMaxModules] = {};  // per new module: its reference kept for the tool
  for (uint32_t k = first; k < g_sites->count; ++k) {
    const attach_abi::Patch p = g_sites->patches[k];
    unsigned mod = g_mod_count;
    for (unsigned i = first_mod; i < g_mod_count && mod == g_mod_count; ++i)
      if (in_module(g_mods[i], p.addr)) mod = i;
    if (mod == g_mod_count) continue;
    if (!late || safe_late(p)) {
      if (apply(p)) g_sites->patches[n++] = p;
      continue;
    }
    // Written by the tool with every thread stopped, never here.
    dl_phdr_info info{};
    info.dlpi_addr = g_mods[mod].bias;
    info.dlpi_name = g_mods[mod].name;
    if (queue_for_tool(p, &info, &kept[mod - first_mod]))
      g_sites->patches[n++] = p;
  }
  g_sites->count = n;
  publish_count();
  attach_late_post(&g_sync);
  return true;
}

unsigned long long unload_count() {
  unsigned long long subs = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    *static_cast<unsigned long long*>(p) = info->dlpi_subs;
    return 1;
  }, &subs);
  return subs;
}

// Drops the references of late modules the tool is done with (libc's dlclose). A module the
// program closed meanwhile goes now: its `module-unmapped` line, as the wrapper would write.
void drop_kept() {
  if (!g_drop_count) return;
  const unsigned long long before = unload_count();
  for (unsigned i = 0; i < g_drop_count; ++i) dlclose(g_drop[i]);
  g_drop_count = 0;
  if (unload_count() != before) modules_after_unload();
}

}  // namespace

void attach_dl_pass() {
  if (attach_session() == 0 || !g_sites || __atomic_load_n(&g_frozen, __ATOMIC_RELAXED)) return;
  // The tool's pokes so far are answered by this pass (it looks at every module): the tool
  // has one made by an injected call when none comes (attach_abi.hpp, DlSync::passed).
  __atomic_store_n(&g_sync.passed, __atomic_load_n(&g_sync.poke, __ATOMIC_ACQUIRE),
                   __ATOMIC_RELEASE);
  g_pins.pin();  // outside our lock: the unpin's dlclose may run the wrapper's prune
  bool found;
  {
    Lock l;
    found = pass_locked();
  }
  g_pins.unpin();
  drop_kept();  // a late module the tool is done with (or could not be kept for it)
  {
    Lock l;
    prune();  // a module the program dlclose'd during the pass went at the unpin
  }
  // A new module's constructors ran before its GOT words of sigaction & co. were the
  // interposers': a handler one installed is in the kernel unwrapped. Wrapped now, its
  // words redirected just above (docs/patching.md, "Modules loaded while attached").
  if (found) signal_handlers_wrap_running();
}

bool attach_dl_idle() { return !__atomic_load_n(&g_lock, __ATOMIC_ACQUIRE); }

const attach_abi::DlSync* attach_dl_sync() { return &g_sync; }

bool attach_dl_poked() {
  if (attach_session() == 0 || !g_sites) return false;
  const uint64_t poke = __atomic_load_n(&g_sync.poke, __ATOMIC_ACQUIRE);
  if (poke == __atomic_load_n(&g_poke_seen, __ATOMIC_RELAXED)) return false;
  // Several threads may see it at once: one takes it.
  uint64_t seen = __atomic_load_n(&g_poke_seen, __ATOMIC_RELAXED);
  return seen != poke &&
         __atomic_compare_exchange_n(&g_poke_seen, &seen, poke, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED);
}

bool attach_dl_unload_begin() {
  if (attach_session() == 0) return false;
  __atomic_add_fetch(&g_sync.unloading, 1, __ATOMIC_ACQ_REL);
  return true;
}

void attach_dl_freeze() {
  {
    Lock l;
    g_frozen = true;
    attach_meta_release(g_sites);  // no hook and no pass released them
    // The tool answered every batch it took before this call; one it did not take stays
    // unwritten (attach_late_fold).
    if (g_sites)
      g_drop_count += attach_late_fold(&g_sync, g_sites, true, g_drop + g_drop_count,
                                       kMaxDrop - g_drop_count);
    publish_count();
  }
  drop_kept();
  Lock l;
  if (g_sites) prune();
}

void attach_dl_release_meta() {
  // Not waiting: this thread may hold the lock itself, in a pass a signal interrupted.
  if (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) return;
  attach_meta_release(g_sites);
  __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
}

void attach_dl_after_unload(bool begun) {
  if (attach_session() != 0 && g_sites) {
    Lock l;
    prune();
  }
  if (begun) __atomic_sub_fetch(&g_sync.unloading, 1, __ATOMIC_ACQ_REL);
}

}  // namespace callmon::rt
