// White-box tests of the GOT API (runtime/patching/got_slots.*): the test binary's own
// slots are enumerated, one is redirected and put back, and a store into a read-only page
// leaves the page read-only.
#include "runtime/patching/got_slots.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using callmon::rt::for_each_got_slot;
using callmon::rt::GotSlot;
using callmon::rt::store_got_slot;

struct Found {
  std::vector<GotSlot> slots;
  std::vector<std::string> names;
};

Found main_module_slots() {
  Found f;
  link_map* lm = _r_debug.r_map;  // the executable comes first
  for_each_got_slot(lm->l_addr, lm->l_ld, [](const GotSlot& s, void* ctx) {
    auto* out = static_cast<Found*>(ctx);
    out->slots.push_back(s);
    out->names.emplace_back(s.name);
  }, &f);
  return f;
}

pid_t fake_getppid() { return 424242; }

std::string protection_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    auto dash = range.find('-');
    uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
    uintptr_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (a >= lo && a < hi) return perms.substr(0, 3);
  }
  return "";
}

TEST(GotSlots, FindsTheExecutablesImports) {
  Found f = main_module_slots();
  ASSERT_FALSE(f.slots.empty());
  bool getppid_seen = false;
  for (size_t i = 0; i < f.slots.size(); ++i) {
    EXPECT_TRUE(f.slots[i].type == R_X86_64_JUMP_SLOT || f.slots[i].type == R_X86_64_GLOB_DAT);
    if (f.names[i] == "getppid") getppid_seen = true;
  }
  EXPECT_TRUE(getppid_seen);
}

TEST(GotSlots, RedirectsACallThroughTheSlot) {
  pid_t real = getppid();  // binds the slot when binding is lazy
  Found f = main_module_slots();
  for (size_t i = 0; i < f.slots.size(); ++i) {
    if (f.names[i] != "getppid") continue;
    uintptr_t old = *f.slots[i].slot;
    ASSERT_TRUE(store_got_slot(f.slots[i].slot, reinterpret_cast<uintptr_t>(&fake_getppid)));
    // Through a volatile pointer so the call is not folded into one through another slot.
    pid_t (*volatile call)() = &getppid;
    pid_t seen = f.slots[i].type == R_X86_64_JUMP_SLOT ? getppid() : call();
    ASSERT_TRUE(store_got_slot(f.slots[i].slot, old));
    EXPECT_EQ(seen, 424242);
    EXPECT_EQ(getppid(), real);
    return;
  }
  FAIL() << "no getppid slot";
}

TEST(GotSlots, StoreIntoAReadOnlyPageKeepsItReadOnly) {
  long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* word = static_cast<uintptr_t*>(p) + 3;
  ASSERT_TRUE(store_got_slot(word, 0x1234));
  EXPECT_EQ(*word, 0x1234u);
  EXPECT_EQ(protection_of(word), "r--");
  munmap(p, page);
}

TEST(GotSlots, NoDynamicSectionVisitsNothing) {
  int n = 0;
  for_each_got_slot(0, nullptr, [](const GotSlot&, void* c) { ++*static_cast<int*>(c); }, &n);
  EXPECT_EQ(n, 0);
}

}  // namespace
