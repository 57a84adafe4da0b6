// attach_late (runtime/patching/attach_late.hpp): the batch of late sites the runtime posts
// to `callmon record -p` and the fold of its answer. Who writes what: a posted site stays in
// the attach's list only if the tool wrote it; the module references go back once answered;
// sites queued while a batch is posted wait for the next; the detach drops what the tool
// never took. The entry pass's meta functions are stubbed here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/patching/attach_late.hpp"

namespace callmon::rt {
std::string g_meta;
std::vector<uint64_t> g_dropped;
bool g_hold = false;
void meta_append(const char* line, unsigned len) { g_meta.append(line, len); }
void entry_patch_hold_meta(bool hold) { g_hold = hold; }
void entry_patch_flush_meta() {}
void entry_patch_drop_patched(const uint64_t* sites, unsigned n, const char*) {
  g_dropped.assign(sites, sites + n);
}
}  // namespace callmon::rt

namespace {

using namespace callmon;
using attach_abi::Patch;

Patch site(uint64_t addr, uint32_t kind = attach_abi::kSledCall) {
  Patch p{};
  p.addr = addr;
  p.len = 5;
  p.kind = kind;
  return p;
}

struct AttachLate : ::testing::Test {
  attach_abi::DlSync sync{};
  Patch list[16];
  rt::AttachSites sites{};
  int h1 = 0, h2 = 0;
  void* drop[8];

  void SetUp() override {
    sites.patches = list;
    rt::attach_late_reset(&sync);
    rt::g_meta.clear();
    rt::g_dropped.clear();
  }
  // As the pass does: in the list unwritten, and queued for the tool.
  void queue(const Patch& p) {
    list[sites.count++] = p;
    ASSERT_TRUE(rt::attach_late_queue(p));
  }
  // As the tool does: len 0 in the sites it left, then done.
  void answer(std::initializer_list<uint64_t> left) {
    auto* batch = reinterpret_cast<Patch*>(sync.late);
    for (uint32_t i = 0; i < sync.late_count; ++i)
      for (uint64_t a : left)
        if (batch[i].addr == a) batch[i].len = 0;
    sync.late_ns = 1234;
    sync.late_state = 2;
  }
};

TEST_F(AttachLate, PostsTheQueuedSitesAndFoldsTheAnswer) {
  rt::attach_late_hold_meta();
  queue(site(0x1000));
  queue(site(0x2000, attach_abi::kEntryJump));
  queue(site(0x3000, attach_abi::kEntryJump));
  ASSERT_TRUE(rt::attach_late_keep(&h1));
  rt::attach_late_post(&sync);
  EXPECT_EQ(sync.late_state, 1u);
  EXPECT_EQ(sync.late_count, 3u);
  EXPECT_TRUE(rt::g_hold);  // the entry lines wait for the answer
  // Not answered yet: nothing changes.
  EXPECT_EQ(rt::attach_late_fold(&sync, &sites, false, drop, 8), 0u);
  EXPECT_EQ(sites.count, 3u);
  answer({0x3000});
  ASSERT_EQ(rt::attach_late_fold(&sync, &sites, false, drop, 8), 1u);
  EXPECT_EQ(drop[0], &h1);
  ASSERT_EQ(sites.count, 2u);  // the site the tool left is no longer the detach's
  EXPECT_EQ(list[0].addr, 0x1000u);
  EXPECT_EQ(list[1].addr, 0x2000u);
  EXPECT_EQ(rt::g_dropped, std::vector<uint64_t>{0x3000});  // patch-refused
  EXPECT_EQ(rt::g_meta, "late-stop 2 1 1234\n");
  EXPECT_EQ(sync.late_state, 0u);
  EXPECT_FALSE(rt::g_hold);
}

TEST_F(AttachLate, SitesQueuedWhileABatchIsPostedWaitForTheNext) {
  queue(site(0x1000));
  ASSERT_TRUE(rt::attach_late_keep(&h1));
  rt::attach_late_post(&sync);
  queue(site(0x5000));
  ASSERT_TRUE(rt::attach_late_keep(&h2));
  rt::attach_late_post(&sync);
  EXPECT_EQ(sync.late_count, 1u);  // the tool's batch does not change under it
  answer({});
  ASSERT_EQ(rt::attach_late_fold(&sync, &sites, false, drop, 8), 1u);
  EXPECT_EQ(drop[0], &h1);  // h2's module waits with its site
  EXPECT_EQ(sync.late_state, 1u);
  ASSERT_EQ(sync.late_count, 1u);
  EXPECT_EQ(reinterpret_cast<Patch*>(sync.late)[0].addr, 0x5000u);
  EXPECT_EQ(sites.count, 2u);
}

TEST_F(AttachLate, TheDetachDropsWhatTheToolNeverTook) {
  queue(site(0x1000));
  ASSERT_TRUE(rt::attach_late_keep(&h1));
  rt::attach_late_post(&sync);
  ASSERT_EQ(rt::attach_late_fold(&sync, &sites, true, drop, 8), 1u);
  EXPECT_EQ(sites.count, 0u);
  EXPECT_EQ(rt::g_meta, "late-stop 0 1 0\n");
  EXPECT_EQ(sync.late_state, 0u);
}

}  // namespace
