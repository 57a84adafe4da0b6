// Stub pages of the library-call probes (see got_stub.hpp). A page is mapped read-write,
// filled, and sealed read-execute before any slot points into it; a later batch that finds
// room on a sealed page starts a new page instead, so no page is ever writable while code
// may run from it.
//
// Stub layout (32 bytes):
//    0: 4c 8d 1d 09 00 00 00   lea  16(%rip-relative), %r11   -> the LibcallData at +16
//    7: ff 25 xx xx xx xx      jmp  *entry(%rip)              -> the page's first word
//   13: cc cc cc               (int3 padding)
//   16: LibcallData {fn, target}
// The page's first 32 bytes hold the address of callmon_libcall_entry.
#include "runtime/patching/got_stub.hpp"

#include <string.h>
#include <sys/mman.h>

extern "C" void callmon_libcall_entry();  // arch/x86_64/libcall_entry.S

namespace callmon::rt {

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kStub = 32;
constexpr unsigned kMaxPages = 256;

struct Page {
  uint8_t* base;
  size_t used;
  bool sealed;
};
Page g_pages[kMaxPages];
unsigned g_page_count = 0;
unsigned g_stubs = 0;

Page* open_page() {
  if (g_page_count && !g_pages[g_page_count - 1].sealed &&
      g_pages[g_page_count - 1].used + kStub <= kPage)
    return &g_pages[g_page_count - 1];
  if (g_page_count == kMaxPages) return nullptr;
  void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* base = static_cast<uint8_t*>(p);
  auto entry = reinterpret_cast<uintptr_t>(&callmon_libcall_entry);
  memcpy(base, &entry, sizeof entry);
  memset(base + 8, 0xcc, kStub - 8);
  Page* pg = &g_pages[g_page_count];
  *pg = {base, kStub, false};
  // Published only once the page is sealed (got_is_stub reads g_page_count).
  return pg;
}

}  // namespace

uintptr_t got_stub_add(const LibcallData& d) {
  Page* pg = open_page();
  if (!pg) return 0;
  uint8_t* s = pg->base + pg->used;
  static const uint8_t kLea[7] = {0x4c, 0x8d, 0x1d, 0x09, 0x00, 0x00, 0x00};
  memcpy(s, kLea, sizeof kLea);
  s[7] = 0xff;
  s[8] = 0x25;
  int32_t rel = static_cast<int32_t>(reinterpret_cast<intptr_t>(pg->base) -
                                     reinterpret_cast<intptr_t>(s + 13));
  memcpy(s + 9, &rel, 4);
  memset(s + 13, 0xcc, 3);
  memcpy(s + 16, &d, sizeof d);
  pg->used += kStub;
  if (pg == &g_pages[g_page_count]) __atomic_store_n(&g_page_count, g_page_count + 1, __ATOMIC_RELEASE);
  ++g_stubs;
  return reinterpret_cast<uintptr_t>(s);
}

void got_stubs_seal() {
  for (unsigned i = 0; i < g_page_count; ++i) {
    if (g_pages[i].sealed) continue;
    mprotect(g_pages[i].base, kPage, PROT_READ | PROT_EXEC);
    g_pages[i].sealed = true;
  }
}

bool got_is_stub(uintptr_t addr) {
  unsigned n = __atomic_load_n(&g_page_count, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n; ++i) {
    auto b = reinterpret_cast<uintptr_t>(g_pages[i].base);
    if (addr >= b + kStub && addr < b + kPage) return true;
  }
  return false;
}

unsigned got_stub_count() { return g_stubs; }

}  // namespace callmon::rt
