// The name filter's module table and per-address decision (filter_select.hpp).
#include "runtime/selection/filter_select.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/selection/filter_query.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/core/slow_call.hpp"
#include "runtime/core/sys.hpp"

namespace callmon::rt {

namespace {

struct Module {
  uintptr_t lo, hi;
  uint64_t path_hash;
  uint32_t first, count;  // its ranges in Table::ranges
  uint32_t spec_first, spec_count;  // its argument specs in Table::specs
};

struct Range {
  uintptr_t lo, hi;
};

// Immutable once published. Replaced tables are never unmapped: another thread may still
// be searching one, and there is no cheap way to know when it stops (a few KiB per dlopen).
struct Table {
  size_t bytes;
  uint32_t gen;
  uint32_t nmod;
  uint32_t nrange;
  uint32_t nspec;
  Module* mods;
  Range* ranges;
  select::SpecEntry* specs;  // absolute addresses, sorted per module
};

// A module found during the current scan, waiting for filter_scan_done.
struct Pending {
  Module mod;
  Range* ranges;  // mmap'd, absolute addresses, clipped to the module
  uint32_t count;
  size_t map_bytes;
  select::SpecEntry* specs;  // mmap'd, absolute addresses, clipped to the module
  uint32_t spec_count;
  size_t spec_map_bytes;
};

bool g_on = false;
char g_service[256];
char g_self[4096];
bool g_outside_selected = true;
bool g_warned = false;
bool g_any_specs = false;  // some module has argument specs: function_spec may answer
Table* g_table = nullptr;  // published with release, read with acquire
uint32_t g_last_gen = 0;   // of the last table published: an attach's new tables go on from it
Pending g_pending[64];
unsigned g_npending = 0;
// Starts of modules unmapped since the last table (filter_module_gone), left out of the next.
uintptr_t g_gone[64];
unsigned g_ngone = 0;

// Decisions by address, tagged with the table's generation so a new table voids them all
// at once. One word per entry (address << 17 | gen << 1 | selected) so a racing reader
// sees an entry whole or not at all; relaxed accesses are enough for a cache.
constexpr unsigned kCacheSize = 4096;
uint64_t g_cache[kCacheSize];

uint64_t hash_str(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<uint8_t>(*s)) * 1099511628211ull;
  return h;
}

void* map_bytes(size_t bytes) {
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

size_t page_round(size_t n) { return (n + 4095) & ~size_t{4095}; }

// Tables come from one reservation made with the first one (at start-up, before the
// program's dlopens): a table published right after a dlclose (filter_module_gone) must not
// take the address range the library left, which the loader gives the next library loaded
// otherwise. Pages are touched only as tables use them. Beyond it, tables get mappings of
// their own. Only filter_scan_done allocates here, under the module scan lock.
constexpr size_t kArenaBytes = size_t{8} << 20;
char* g_arena = nullptr;
size_t g_arena_used = 0;
bool g_arena_failed = false;

void* table_bytes(size_t bytes) {
  if (!g_arena && !g_arena_failed) {
    void* m = mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) g_arena_failed = true;
    else g_arena = static_cast<char*>(m);
  }
  if (g_arena && kArenaBytes - g_arena_used >= bytes) {
    void* p = g_arena + g_arena_used;
    g_arena_used += bytes;  // bytes is a multiple of the page size
    return p;
  }
  return map_bytes(bytes);
}

Table* current() { return __atomic_load_n(&g_table, __ATOMIC_ACQUIRE); }

bool table_has(const Table* t, uintptr_t lo, uintptr_t hi, uint64_t hash) {
  if (t)
    for (uint32_t i = 0; i < t->nmod; ++i)
      if (t->mods[i].lo == lo && t->mods[i].hi == hi && t->mods[i].path_hash == hash) return true;
  for (unsigned i = 0; i < g_npending; ++i)
    if (g_pending[i].mod.lo == lo && g_pending[i].mod.path_hash == hash) return true;
  return false;
}

bool overlaps_pending(const Module& m) {
  for (unsigned i = 0; i < g_npending; ++i)
    if (m.lo < g_pending[i].mod.hi && g_pending[i].mod.lo < m.hi) return true;
  return false;
}

// An old table's module the next table keeps: not replaced by one found now, not unmapped.
bool kept(const Module& m) {
  if (overlaps_pending(m)) return false;
  for (unsigned i = 0; i < g_ngone; ++i)
    if (g_gone[i] == m.lo) return false;
  return true;
}

// The index of the last of n elements sorted by `.lo` whose lo <= a, or -1.
template <class T>
long last_starting_at_or_before(const T* v, uint32_t n, uintptr_t a) {
  uint32_t lo = 0, hi = n;  // first element with v[i].lo > a
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (v[mid].lo <= a) lo = mid + 1;
    else hi = mid;
  }
  return static_cast<long>(lo) - 1;
}

// The module covering `a`, or nullptr.
const Module* find_module(const Table* t, uintptr_t a) {
  long i = last_starting_at_or_before(t->mods, t->nmod, a);
  return i >= 0 && a < t->mods[i].hi ? &t->mods[i] : nullptr;
}

// Selected or not, and whether any module covers `a`.
bool lookup(const Table* t, uintptr_t a, bool* known) {
  const Module* m = find_module(t, a);
  *known = m != nullptr;
  if (!m) return false;
  const Range* r = t->ranges + m->first;
  long i = last_starting_at_or_before(r, m->count, a);
  return i >= 0 && a < r[i].hi;
}

// ELF virtual address v of a module mapped at [lo, hi) with `bias`, clipped to the module.
uintptr_t rebase(uint64_t v, uintptr_t lo, uintptr_t hi, uintptr_t bias) {
  uintptr_t a = v > hi - bias ? hi : v + bias;  // no overflow for v = UINT64_MAX
  return a < lo ? lo : a;
}

void release(Pending& p) {
  if (p.ranges) munmap(p.ranges, p.map_bytes);
  if (p.specs) munmap(p.specs, p.spec_map_bytes);
}

}  // namespace

void filter_setup(const char* service, const char* self) {
  g_on = service && service[0];
  if (!g_on) return;
  copy_str(g_service, sizeof g_service, service[0] == '@' ? service + 1 : service);
  if (self) copy_str(g_self, sizeof g_self, self);
}

bool filter_on() { return g_on; }

void filter_module_found(const char* path, uintptr_t lo, uintptr_t hi, uintptr_t bias) {
  if (!g_on || strcmp(path, g_self) == 0) return;
  uint64_t hash = hash_str(path);
  if (table_has(current(), lo, hi, hash)) return;  // a fork child's rescan: known already
  if (g_npending == sizeof g_pending / sizeof g_pending[0]) filter_scan_done();
  Pending& p = g_pending[g_npending];
  p = Pending{{lo, hi, hash, 0, 0, 0, 0}, nullptr, 0, 0, nullptr, 0, 0};
  QueryAnswer a = query_selection(g_service, path);
  if (!a.ok) {
    // Recorded unfiltered rather than silently dropped: the user sees more, never less.
    if (!g_warned) {
      g_warned = true;
      char msg[4400];
      LineBuf b(msg, sizeof msg);
      b.str("the name filter service did not answer for ").str(path);
      b.str("; its functions are recorded unfiltered");
      diag(msg);
    }
    p.ranges = static_cast<Range*>(map_bytes(4096));
    if (!p.ranges) return;
    p.ranges[0] = {lo, hi};
    p.count = 1;
    p.map_bytes = 4096;
  } else {
    g_outside_selected = a.outside_selected;
    // Converted in place (same layout): ELF virtual addresses to this mapping's, clipped.
    static_assert(sizeof(Range) == sizeof(select::SelectRange));
    auto* out = reinterpret_cast<Range*>(a.ranges);
    uint32_t n = 0;
    for (uint64_t i = 0; i < a.count; ++i) {
      uintptr_t alo = rebase(a.ranges[i].lo, lo, hi, bias);
      uintptr_t ahi = rebase(a.ranges[i].hi, lo, hi, bias);
      if (alo < ahi) out[n++] = {alo, ahi};
    }
    p.ranges = out;
    p.count = n;
    p.map_bytes = a.map_bytes;
    uint32_t ns = 0;
    for (uint64_t i = 0; i < a.spec_count; ++i) {
      select::SpecEntry e = a.specs[i];
      e.lo = rebase(e.lo, lo, hi, bias);
      e.hi = rebase(e.hi, lo, hi, bias);
      if (e.lo < e.hi) a.specs[ns++] = e;
    }
    p.specs = a.specs;
    p.spec_count = ns;
    p.spec_map_bytes = a.spec_map_bytes;
    if (ns) g_any_specs = true;
  }
  ++g_npending;
}

void filter_module_gone(uintptr_t lo) {
  if (!g_on) return;
  if (g_ngone < sizeof g_gone / sizeof g_gone[0]) {
    g_gone[g_ngone++] = lo;
  } else {
    // More at once than remembered: the stale entry stays until a module found at its
    // place replaces it (the behaviour before modules were forgotten).
  }
}

void filter_scan_done() {
  if (!g_on || (g_npending == 0 && g_ngone == 0)) return;
  Table* old = current();
  uint32_t nmod = g_npending, nrange = 0, nspec = 0;
  for (unsigned i = 0; i < g_npending; ++i) {
    nrange += g_pending[i].count;
    nspec += g_pending[i].spec_count;
  }
  if (old)
    for (uint32_t i = 0; i < old->nmod; ++i)
      if (kept(old->mods[i])) {
        ++nmod;
        nrange += old->mods[i].count;
        nspec += old->mods[i].spec_count;
      }
  // Specs first: their 8-byte fields stay aligned whatever the other counts.
  size_t bytes = page_round(sizeof(Table) + nspec * sizeof(select::SpecEntry) +
                            nmod * sizeof(Module) + nrange * sizeof(Range));
  auto* t = static_cast<Table*>(table_bytes(bytes));
  if (t) {
    t->bytes = bytes;
    // Never a generation used before: the cache's entries are tagged with it, and an
    // attach's first table follows the last attach's (filter_reset_for_attach).
    t->gen = ++g_last_gen;
    t->specs = reinterpret_cast<select::SpecEntry*>(t + 1);
    t->mods = reinterpret_cast<Module*>(t->specs + nspec);
    t->ranges = reinterpret_cast<Range*>(t->mods + nmod);
    // Modules sorted by start (insertion sort: a few dozen modules in practice).
    auto add = [&](const Module& m, const Range* r, uint32_t count, const select::SpecEntry* sp,
                   uint32_t spec_count) {
      Module nm = m;
      nm.first = t->nrange;
      nm.count = count;
      memcpy(t->ranges + t->nrange, r, count * sizeof(Range));
      t->nrange += count;
      nm.spec_first = t->nspec;
      nm.spec_count = spec_count;
      if (spec_count) memcpy(t->specs + t->nspec, sp, spec_count * sizeof(select::SpecEntry));
      t->nspec += spec_count;
      uint32_t k = t->nmod++;
      while (k > 0 && t->mods[k - 1].lo > nm.lo) {
        t->mods[k] = t->mods[k - 1];
        --k;
      }
      t->mods[k] = nm;
    };
    if (old)
      for (uint32_t i = 0; i < old->nmod; ++i)
        if (kept(old->mods[i]))
          add(old->mods[i], old->ranges + old->mods[i].first, old->mods[i].count,
              old->specs + old->mods[i].spec_first, old->mods[i].spec_count);
    for (unsigned i = 0; i < g_npending; ++i)
      add(g_pending[i].mod, g_pending[i].ranges, g_pending[i].count, g_pending[i].specs,
          g_pending[i].spec_count);
    __atomic_store_n(&g_table, t, __ATOMIC_RELEASE);
  }
  for (unsigned i = 0; i < g_npending; ++i) release(g_pending[i]);
  g_npending = 0;
  g_ngone = 0;
}

void filter_reset_for_attach() {
  filter_after_fork_child();
  __atomic_store_n(&g_table, static_cast<Table*>(nullptr), __ATOMIC_RELEASE);
  g_on = false;
  g_warned = false;
  g_any_specs = false;
}

void filter_after_fork_child() {
  for (unsigned i = 0; i < g_npending; ++i) release(g_pending[i]);
  g_npending = 0;
  g_ngone = 0;
}

const select::SpecEntry* function_spec(uintptr_t fn) {
  if (!g_any_specs) return nullptr;
  const Table* t = current();
  if (!t || t->nspec == 0) return nullptr;
  const Module* m = find_module(t, fn);
  if (!m) return nullptr;
  const select::SpecEntry* e = t->specs + m->spec_first;
  long i = last_starting_at_or_before(e, m->spec_count, fn);
  return i >= 0 && fn < e[i].hi ? &e[i] : nullptr;
}

namespace {

// The cache slot of address `fn`, and the tag of its decision under table `t`.
unsigned cache_slot(uintptr_t fn) {
  uint64_t addr = fn & ((uint64_t{1} << 47) - 1);
  return static_cast<unsigned>((addr >> 4) ^ (addr >> 16)) & (kCacheSize - 1);
}
uint64_t cache_tag(const Table* t, uintptr_t fn) {
  uint64_t addr = fn & ((uint64_t{1} << 47) - 1);
  return (addr << 17) | ((t->gen & 0xffffu) << 1);
}

// The cached decision for `fn` under table `t`: 1 or 0, or -1 when the cache has none.
int cached_decision(const Table* t, uintptr_t fn) {
  uint64_t e = __atomic_load_n(&g_cache[cache_slot(fn)], __ATOMIC_RELAXED);
  return (e & ~uint64_t{1}) == cache_tag(t, fn) ? static_cast<int>(e & 1) : -1;
}

}  // namespace

bool filter_seed(uintptr_t fn) {
  const Table* t = current();
  if (!t) return false;
  __atomic_store_n(&g_cache[cache_slot(fn)], cache_tag(t, fn) | 1, __ATOMIC_RELAXED);
  return true;
}

int function_selected_cached(uintptr_t fn) {
  const Table* t = current();
  return t && !t->nspec ? cached_decision(t, fn) : -1;
}

bool function_selected(uintptr_t fn, bool may_rescan) {
  const Table* t = current();
  if (!t) return true;
  if (int cached = cached_decision(t, fn); cached >= 0) return cached;
  unsigned slot = cache_slot(fn);
  uint64_t tag = cache_tag(t, fn);
  bool known;
  bool sel = lookup(t, fn, &known);
  if (!known && may_rescan) {
    // A module loaded without a dlopen we saw (a constructor of a library being opened
    // runs before dlopen returns): look again. Through slow_call: a filter's every call
    // comes here from behind slow_call_hot, and the rescan calls libc (core/slow_call.hpp).
    slow_call(&modules_rescan);
    t = current();
    sel = lookup(t, fn, &known);
    tag = cache_tag(t, fn);
  }
  if (!known) {
    // Not cached before a rescan had its chance: a later, non-nested hook looks again.
    if (!may_rescan) return g_outside_selected;
    sel = g_outside_selected;
  }
  __atomic_store_n(&g_cache[slot], tag | (sel ? 1 : 0), __ATOMIC_RELAXED);
  return sel;
}

}  // namespace callmon::rt
