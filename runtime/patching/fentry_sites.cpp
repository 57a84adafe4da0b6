// Finding the `call __fentry__` sites of a -pg -mfentry module (see fentry_sites.hpp).
#include "runtime/patching/fentry_sites.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_funcs.hpp"
#include "runtime/patching/got_slots.hpp"

namespace callmon::rt {

namespace {

constexpr int kMaxSlots = 4;

struct Slots {
  uintptr_t at[kMaxSlots];
  int count = 0;
  bool has(uintptr_t a) const {
    for (int i = 0; i < count; ++i)
      if (at[i] == a) return true;
    return false;
  }
};

// Whether [a, a + n) lies in one of the module's executable segments.
bool in_code(const SledModule& m, uintptr_t a, size_t n) {
  for (int i = 0; i < m.exec_count; ++i)
    if (a >= m.exec[i].start && a + n <= m.exec[i].end) return true;
  return false;
}

int32_t rel_at(const uint8_t* p) {
  int32_t r;
  memcpy(&r, p, 4);
  return r;
}

// The GOT word a PLT entry at `t` jumps through, or 0: `jmp *d(%rip)` (ff 25), the same
// with a bnd prefix (f2), and both after an endbr64 (the IBT .plt.sec).
uintptr_t plt_word(const SledModule& m, uintptr_t t) {
  if (!in_code(m, t, 11)) return 0;
  const auto* c = reinterpret_cast<const uint8_t*>(t);
  size_t at = (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) ? 4 : 0;
  if (c[at] == 0xf2) ++at;
  if (c[at] != 0xff || c[at + 1] != 0x25) return 0;
  return t + at + 6 + static_cast<intptr_t>(rel_at(c + at + 2));
}

// The length of the call of __fentry__ at `site`, 0 if it is none.
uint8_t call_length(const SledModule& m, uintptr_t site, const Slots& slots) {
  if (!in_code(m, site, 6)) return 0;
  const auto* c = reinterpret_cast<const uint8_t*>(site);
  if (c[0] == 0xe8)
    return slots.has(plt_word(m, site + 5 + static_cast<intptr_t>(rel_at(c + 1)))) ? 5 : 0;
  if (c[0] == 0xff && c[1] == 0x15)
    return slots.has(site + 6 + static_cast<intptr_t>(rel_at(c + 2))) ? 6 : 0;
  return 0;
}

}  // namespace

FentrySites::FentrySites(const dl_phdr_info* info, const char* path, const SledModule& m) {
  const void* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const void*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return;
  Slots slots;
  for_each_got_slot(info->dlpi_addr, dyn, [](const GotSlot& g, void* p) {
    auto* s = static_cast<Slots*>(p);
    if (s->count < kMaxSlots && g.name && !strcmp(g.name, "__fentry__"))
      s->at[s->count++] = reinterpret_cast<uintptr_t>(g.slot);
  }, &slots);
  if (!slots.count) return;
  ModuleFunctions funcs(info, path);
  if (!funcs.ok() || !funcs.count()) return;
  bytes_ = funcs.count() * sizeof(FentrySite);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  sites_ = static_cast<FentrySite*>(p);
  for (const EntryFunction& f : funcs) {
    uintptr_t site = f.addr;
    if (in_code(m, site, 4) && is_endbr64(reinterpret_cast<const uint8_t*>(site))) site += 4;
    if (uint8_t len = call_length(m, site, slots)) sites_[count_++] = {site, len};
  }
}

FentrySites::~FentrySites() {
  if (sites_) munmap(sites_, bytes_);
}

}  // namespace callmon::rt
