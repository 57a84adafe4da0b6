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

uint32_t sysv_hash(const char* s) {
  uint32_t h = 0;
  for (auto* p = reinterpret_cast<const unsigned char*>(s); *p; ++p) {
    h = (h << 4) + *p;
    uint32_t g = h & 0xf0000000;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// The name of version index `ndx` of the module's definitions, or nullptr.
const char* verdef_name(const DynTables& t, uint16_t ndx) {
  const Elf64_Verdef* vd = t.verdef;
  for (uint64_t k = 0; vd && k < t.verdef_count; ++k) {
    if (vd->vd_ndx == ndx) {
      auto* aux = reinterpret_cast<const Elf64_Verdaux*>(reinterpret_cast<const char*>(vd) + vd->vd_aux);
      return t.strs + aux->vda_name;
    }
    if (!vd->vd_next) break;
    vd = reinterpret_cast<const Elf64_Verdef*>(reinterpret_cast<const char*>(vd) + vd->vd_next);
  }
  return nullptr;
}

// Whether symbol `i` (named `name` already) is a definition a reference with `version`
// binds to.
bool matches(const DynTables& t, uint32_t i, const char* version) {
  const Elf64_Sym& s = t.syms[i];
  if (s.st_shndx == SHN_UNDEF || s.st_value == 0) return false;
  unsigned bind = ELF64_ST_BIND(s.st_info), type = ELF64_ST_TYPE(s.st_info);
  if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) return false;
  if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) return false;
  if (!t.versym) return true;
  uint16_t v = t.versym[i];
  uint16_t ndx = v & 0x7fff;
  if (ndx == 0) return false;  // local
  if (!version) return !(v & 0x8000);
  if (ndx == 1) return true;  // unversioned definition
  const char* n = verdef_name(t, ndx);
  return n && strcmp(n, version) == 0;
}

// The first symbol of `name`'s GNU-hash chain for which take(index) holds, or nullptr.
template <class Take>
const Elf64_Sym* gnu_hash_find(const DynTables& t, const char* name, Take take) {
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
    if ((ch | 1) == (h | 1) && take(i)) return &t.syms[i];
    if (ch & 1) return nullptr;
  }
}

}  // namespace

const Elf64_Sym* dyn_lookup_version(const DynTables& t, const char* name, const char* version) {
  if (!t.syms || !t.strs) return nullptr;
  if (t.gnu_hash)
    return gnu_hash_find(t, name, [&](uint32_t i) {
      return strcmp(t.strs + t.syms[i].st_name, name) == 0 && matches(t, i, version);
    });
  if (t.sysv_hash) {
    uint32_t nbucket = t.sysv_hash[0];
    if (nbucket == 0) return nullptr;
    const uint32_t* bucket = t.sysv_hash + 2;
    const uint32_t* chain = bucket + nbucket;
    for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i != 0; i = chain[i])
      if (strcmp(t.strs + t.syms[i].st_name, name) == 0 && matches(t, i, version))
        return &t.syms[i];
  }
  return nullptr;
}

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
      case DT_HASH: t.sysv_hash = reinterpret_cast<const uint32_t*>(p); break;
      case DT_VERDEF: t.verdef = reinterpret_cast<const Elf64_Verdef*>(p); break;
      case DT_VERDEFNUM: t.verdef_count = d->d_un.d_val; break;
      default: break;
    }
  }
  return t;
}

const Elf64_Sym* dyn_lookup(const DynTables& t, const char* name) {
  if (!t.syms || !t.strs || !t.gnu_hash) return nullptr;
  return gnu_hash_find(t, name, [&](uint32_t i) {
    const Elf64_Sym& s = t.syms[i];
    // Prefer the default version (no hidden bit) when several versions share a name.
    return s.st_shndx != SHN_UNDEF && strcmp(t.strs + s.st_name, name) == 0 &&
           (!t.versym || !(t.versym[i] & 0x8000));
  });
}

const char* dyn_needed_version(const DynTables& t, const char* name) {
  if (!t.versym || !t.verneed || !t.syms || !t.strs) return nullptr;
  // The reference's symbol index: scan the undefined symbols for the name. Modules import
  // a few hundred at most, so a linear scan per slot is cheap next to the pass's mprotects.
  uint32_t count = 0;
  if (t.gnu_hash) {
    // Undefined symbols come before symoffset in a GNU-hash module's table.
    count = t.gnu_hash[1];
  } else if (t.sysv_hash) {
    count = t.sysv_hash[1];  // nchain: every symbol
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
