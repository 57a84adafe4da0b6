// The CFA programs of entry trampolines (runtime/patching/entry_cfi.hpp) on byte strings:
// what a copy's pushes, stack adjustments and frame pointer make of the CFA, and where the
// FDE ends.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/patching/entry_cfi.hpp"
#include "runtime/patching/entry_decode.hpp"

using namespace callmon::rt;

namespace {

constexpr uintptr_t kAt = 0x400000 + kTrampCodeOffset;
constexpr size_t kHead = kTrampCodeOffset - kTrampEntry;  // the trampoline's call

class EntryCfi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* err = entry_decoder_error()) GTEST_SKIP() << err;
  }
  std::vector<uint8_t> program(std::vector<uint8_t> copy) {
    copy.resize(copy.size() + 16, 0xcc);  // int3 after the code, as in a pool
    uint8_t out[64];
    size_t n = entry_cfi_program(copy.data(), copy.size(), kAt, out, sizeof out, &range_);
    EXPECT_NE(n, SIZE_MAX);
    return {out, out + (n == SIZE_MAX ? 0 : n)};
  }
  size_t range_ = 0;
};

// DW_CFA_advance_loc by `delta` bytes.
uint8_t adv(size_t delta) { return static_cast<uint8_t>(0x40 | delta); }

// The rows of the trampoline's own code before the copy (entry_tramp.hpp), then `copy`'s:
// from the `lea` that drops the return address the return address is undefined (an
// unwinder meeting the trampoline's return point ends there), at the copy the entry state
// again.
std::vector<uint8_t> with_head(const std::vector<uint8_t>& copy) {
  std::vector<uint8_t> v = {adv(kTrampDropsReturn - kTrampEntry), 0x07, 16,
                            adv(kHead - (kTrampDropsReturn - kTrampEntry)), 0x90, 1};
  for (uint8_t b : copy) v.push_back(b);
  return v;
}

TEST_F(EntryCfi, NothingPushedKeepsTheEntryCfaToTheEnd) {
  // xor %eax,%eax; syscall; ret (a whole function moved)
  EXPECT_EQ(program({0x31, 0xc0, 0x0f, 0x05, 0xc3}), with_head({}));
  EXPECT_EQ(range_, kHead + 5);
}

TEST_F(EntryCfi, PushAndFramePointer) {
  // push %rbp; mov %rsp,%rbp; jmp back
  auto p = program({0x55, 0x48, 0x89, 0xe5, 0xe9, 0, 0, 0, 0});
  // after the push: CFA = rsp+16, rbp at CFA-16; after the mov: CFA = rbp+16
  std::vector<uint8_t> want = with_head({adv(1), 0x0e, 16, 0x86, 2, adv(3), 0x0d, 6});
  EXPECT_EQ(p, want);
  EXPECT_EQ(range_, kHead + 9);
}

TEST_F(EntryCfi, SubFromRspAndPushOfR12) {
  // push %r12; sub $0x18,%rsp; jmp back
  auto p = program({0x41, 0x54, 0x48, 0x83, 0xec, 0x18, 0xe9, 0, 0, 0, 0});
  std::vector<uint8_t> want = with_head({adv(2), 0x0e, 16, 0x8c, 2, adv(4), 0x0e, 40});
  EXPECT_EQ(p, want);
  EXPECT_EQ(range_, kHead + 11);
}

TEST_F(EntryCfi, MovedCallPushesItsReturnAddress) {
  // push disp32(%rip) (the original return address); jmp callee
  auto p = program({0xff, 0x35, 0x10, 0, 0, 0, 0xe9, 0, 0, 0, 0});
  std::vector<uint8_t> want = with_head({adv(6), 0x0e, 16});
  EXPECT_EQ(p, want);
  EXPECT_EQ(range_, kHead + 11);
}

TEST_F(EntryCfi, UnknownStackChangeEndsTheFde) {
  // and $-32,%rsp before any frame pointer: the FDE covers it (the state before it) and
  // stops after it
  auto p = program({0x48, 0x83, 0xe4, 0xe0, 0xe9, 0, 0, 0, 0});
  EXPECT_EQ(p, with_head({}));
  EXPECT_EQ(range_, kHead + 4);
}

TEST_F(EntryCfi, AlignedStackAfterTheFramePointerIsFine) {
  // push %rbp; mov %rsp,%rbp; and $-32,%rsp; jmp back: CFA is rbp-based by then
  auto p = program({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xe4, 0xe0, 0xe9, 0, 0, 0, 0});
  std::vector<uint8_t> want = with_head({adv(1), 0x0e, 16, 0x86, 2, adv(3), 0x0d, 6});
  EXPECT_EQ(p, want);
  EXPECT_EQ(range_, kHead + 13);
}

}  // namespace
