// White-box tests of the library-call pass's helpers: the code scan that tells a GOT slot
// only called through from one whose value is read (got_refs.cpp), and the symbol look-ups
// that bind a slot as the dynamic linker does (got_symbols.cpp).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <vector>

#include "runtime/patching/got_refs.hpp"
#include "runtime/patching/got_symbols.hpp"

namespace {

using callmon::rt::SlotRefs;

// The code scanned, beside the slots in static storage: a RIP-relative displacement reaches
// only 2 GiB, and the heap may lie farther than that from the data (under ASan it does).
alignas(16) uint8_t g_code[256];
size_t g_code_size = 0;

// Appends `insn` (opcode bytes before a 4-byte displacement) referring to `target`, as
// placed at g_code + g_code_size.
void emit(std::initializer_list<uint8_t> op, uintptr_t target,
          std::initializer_list<uint8_t> imm = {}) {
  for (uint8_t b : op) g_code[g_code_size++] = b;
  uintptr_t end = reinterpret_cast<uintptr_t>(g_code) + g_code_size + 4 + imm.size();
  int32_t disp = static_cast<int32_t>(static_cast<intptr_t>(target - end));
  memcpy(g_code + g_code_size, &disp, 4);
  g_code_size += 4;
  for (uint8_t b : imm) g_code[g_code_size++] = b;
}

void nops(size_t n) {
  memset(g_code + g_code_size, 0x90, n);
  g_code_size += n;
}

TEST(GotRefs, CallsAndLoadsAreToldApart) {
  alignas(8) static uintptr_t got[3];
  nops(8);
  emit({0xff, 0x15}, reinterpret_cast<uintptr_t>(&got[0]));        // call *got0
  emit({0xff, 0x25}, reinterpret_cast<uintptr_t>(&got[0]));        // jmp *got0
  emit({0xff, 0x15}, reinterpret_cast<uintptr_t>(&got[1]));        // call *got1
  emit({0x48, 0x8b, 0x05}, reinterpret_cast<uintptr_t>(&got[1]));  // mov got1, %rax
  emit({0x48, 0x83, 0x3d}, reinterpret_cast<uintptr_t>(&got[2]), {0x00});  // cmpq $0, got2
  nops(8);
  SlotRefs refs[3] = {{reinterpret_cast<uintptr_t>(&got[0]), 0, 0},
                      {reinterpret_cast<uintptr_t>(&got[1]), 0, 0},
                      {reinterpret_cast<uintptr_t>(&got[2]), 0, 0}};
  auto lo = reinterpret_cast<uintptr_t>(g_code);
  callmon::rt::got_classify_refs(lo, lo + g_code_size, refs, 3);
  EXPECT_EQ(refs[0].calls, 2u);
  EXPECT_EQ(refs[0].others, 0u);
  EXPECT_EQ(refs[1].calls, 1u);
  EXPECT_GE(refs[1].others, 1u);  // the load: its slot must not be redirected
  EXPECT_EQ(refs[2].calls, 0u);
  EXPECT_GE(refs[2].others, 1u);  // a compare with an immediate after the displacement
}

const link_map* libc_map() {
  for (const link_map* lm = _r_debug.r_map; lm; lm = lm->l_next)
    if (lm->l_name && strstr(lm->l_name, "libc.so.6")) return lm;
  return nullptr;
}

TEST(GotSymbols, VersionsChooseTheDefinition) {
  const link_map* lm = libc_map();
  ASSERT_NE(lm, nullptr);
  auto t = callmon::rt::dyn_tables(lm->l_addr, lm->l_ld);
  const Elf64_Sym* def = callmon::rt::dyn_lookup_version(t, "memcpy", nullptr);
  const Elf64_Sym* v14 = callmon::rt::dyn_lookup_version(t, "memcpy", "GLIBC_2.14");
  const Elf64_Sym* v2 = callmon::rt::dyn_lookup_version(t, "memcpy", "GLIBC_2.2.5");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def, v14);  // the default version
  ASSERT_NE(v2, nullptr);
  EXPECT_NE(v2->st_value, v14->st_value);  // the old memcpy (memmove's behaviour)
  EXPECT_EQ(callmon::rt::dyn_lookup_version(t, "memcpy", "GLIBC_9.99"), nullptr);
  EXPECT_EQ(callmon::rt::dyn_lookup_version(t, "no_such_function_here", nullptr), nullptr);
  // free has a compatibility alias (cfree@GLIBC_2.2.5): the default lookup skips hidden ones.
  const Elf64_Sym* fr = callmon::rt::dyn_lookup(t, "free");
  ASSERT_NE(fr, nullptr);
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);  // not a sanitizer's free
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(reinterpret_cast<void*>(lm->l_addr + fr->st_value), dlsym(libc, "free"));
  dlclose(libc);
}

}  // namespace
