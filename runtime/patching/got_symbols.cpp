// Dynamic symbol look-ups (see got_symbols.hpp). No allocation, no lock.
#include "runtime/patching/got_symbols.hpp"

#include <string.h>

namespace callmon::rt {

namespace {

uintptr_t run_time(uintptr_t base, uintptr_t v) { return v < base ? v + base : v; }

uint32_t gnu_hash(const char* s) {
  uint32_t h = 5381;
  for (auto* p = reinterpret_cast<const unsigned char*>(s); *p; ++p) h = h * 33 + *p;
  return h;
}

}  // namespace

DynTables dyn_tables(uintptr_t base, const void* dyn) {
  DynTables t;
  t.base = base;
  if (!dyn) return t;
  for (auto* d = static_cast<const Elf64_Dyn*>(dyn); d->d_tag != DT_NULL; ++d) {
    uintptr_t p = run_time(base, d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_SYMTAB: t.syms = reinterpret_cast<const Elf64_Sym*>(p); break;
      case DT_STRTAB: t.strs = reinterpret_cast<const char*>(p); break;
      case DT_GNU_HASH: t.gnu_hash = reinterpret_cast<const uint32_t*>(p); break;
      case DT_VERSYM: t.versym = reinterpret_cast<const uint16_t*>(p); break;
      case DT_VERNEED: t.verneed = reinterpret_cast<const Elf64_Verneed*>(p); break;
      case DT_VERNEEDNUM: t.verneed_count = d->d_un.d_val; break;
      default: break;
    }
  }
  return t;
}

const Elf64_Sym* dyn_lookup(const DynTables& t, const char* name) {
  if (!t.syms || !t.strs || !t.gnu_hash) return nullptr;
  uint32_t nbuckets = t.gnu_hash[0], symoffset = t.gnu_hash[1], bloom_size = t.gnu_hash[2];
  if (nbuckets == 0) return nullptr;
  auto* bloom = reinterpret_cast<const uint64_t*>(t.gnu_hash + 4);
  auto* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_size);
  const uint32_t* chain = buckets + nbuckets;
  uint32_t h = gnu_hash(name);
  uint32_t i = buckets[h % nbuckets];
  if (i < symoffset) return nullptr;
  for (;; ++i) {
    uint32_t ch = chain[i - symoffset];
    if ((ch | 1) == (h | 1)) {
      const Elf64_Sym* s = &t.syms[i];
      if (s->st_shndx != SHN_UNDEF && strcmp(t.strs + s->st_name, name) == 0) {
        // Prefer the default version (no hidden bit) when several versions share a name.
        if (!t.versym || !(t.versym[i] & 0x8000)) return s;
      }
    }
    if (ch & 1) break;
  }
  return nullptr;
}

const char* dyn_needed_version(const DynTables& t, const char* name) {
  if (!t.versym || !t.verneed || !t.syms || !t.strs) return nullptr;
  // The reference's symbol index: scan the undefined symbols for the name. Modules import
  // a few hundred at most, so a linear scan per slot is cheap next to the pass's mprotects.
  uint32_t count = 0;
  if (t.gnu_hash) {
    // Undefined symbols come before symoffset in a GNU-hash module's table.
    count = t.gnu_hash[1];
  }
  for (uint32_t i = 1; i < count; ++i) {
    if (t.syms[i].st_shndx != SHN_UNDEF || strcmp(t.strs + t.syms[i].st_name, name) != 0) continue;
    uint16_t v = t.versym[i] & 0x7fff;
    if (v < 2) return nullptr;
    const auto* vn = t.verneed;
    for (uint64_t k = 0; k < t.verneed_count; ++k) {
      const auto* va = reinterpret_cast<const Elf64_Vernaux*>(reinterpret_cast<const char*>(vn) + vn->vn_aux);
      for (unsigned a = 0; a < vn->vn_cnt; ++a) {
        if (va->vna_other == v) return t.strs + va->vna_name;
        va = reinterpret_cast<const Elf64_Vernaux*>(reinterpret_cast<const char*>(va) + va->vna_next);
      }
      vn = reinterpret_cast<const Elf64_Verneed*>(reinterpret_cast<const char*>(vn) + vn->vn_next);
    }
    return nullptr;
  }
  return nullptr;
}

}  // namespace callmon::rt
