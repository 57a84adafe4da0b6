// Finding the `call __fentry__` sites of a -pg -mfentry module (see fentry_sites.hpp).
#include "runtime/patching/fentry_sites.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_funcs.hpp"
#include "runtime/patching/got_slots.hpp"

namespace callmon::rt {

namespace {

int32_t rel_at(const uint8_t* p) {
  int32_t r;
  memcpy(&r, p, 4);
  return r;
}

// The GOT word a PLT entry at `t` jumps through, or 0: `jmp *d(%rip)` (ff 25), the same
// with a bnd prefix (f2), and both after an endbr64 (the IBT .plt.sec).
uintptr_t plt_word(const SledModule& m, uintptr_t t) {
  if (!in_exec(m, t, 11)) return 0;
  const auto* c = reinterpret_cast<const uint8_t*>(t);
  size_t at = (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) ? 4 : 0;
  if (c[at] == 0xf2) ++at;
  if (c[at] != 0xff || c[at + 1] != 0x25) return 0;
  return t + at + 6 + static_cast<intptr_t>(rel_at(c + at + 2));
}

struct SlotSearch {
  const char* name;
  uintptr_t* at;
  int* count;
  int max;
};

}  // namespace

ImportCalls::ImportCalls(const dl_phdr_info* info, const SledModule& m, const char* name) : m_(m) {
  const void* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const void*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return;
  SlotSearch search{name, at_, &count_, kMax};
  for_each_got_slot(info->dlpi_addr, dyn, [](const GotSlot& g, void* p) {
    auto* s = static_cast<SlotSearch*>(p);
    if (*s->count < s->max && g.name && !strcmp(g.name, s->name))
      s->at[(*s->count)++] = reinterpret_cast<uintptr_t>(g.slot);
  }, &search);
}

bool ImportCalls::has(uintptr_t a) const {
  for (int i = 0; i < count_; ++i)
    if (at_[i] == a) return true;
  return false;
}

uint8_t ImportCalls::call_length(uintptr_t site) const {
  if (!count_ || !in_exec(m_, site, 6)) return 0;
  uintptr_t to;
  bool word;
  const uint8_t len = decode_call(site, &to, &word);
  return len && has(word ? to : plt_word(m_, to)) ? len : 0;
}

FentrySites::FentrySites(const dl_phdr_info* info, const char* path, const SledModule& m) {
  ImportCalls calls(info, m, "__fentry__");
  if (!calls.any()) return;
  ModuleFunctions funcs(info, path);
  if (!funcs.ok() || !funcs.count()) return;
  bytes_ = funcs.count() * sizeof(FentrySite);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  sites_ = static_cast<FentrySite*>(p);
  for (const EntryFunction& f : funcs) {
    uintptr_t site = f.addr;
    if (in_exec(m, site, 4) && is_endbr64(reinterpret_cast<const uint8_t*>(site))) site += 4;
    if (uint8_t len = calls.call_length(site)) sites_[count_++] = {site, len};
  }
}

FentrySites::~FentrySites() {
  if (sites_) munmap(sites_, bytes_);
}

}  // namespace callmon::rt
