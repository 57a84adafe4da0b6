// Entry patching's prologue relocation (runtime/patching/entry_reloc.hpp) on byte strings:
// what is moved, how RIP-relative operands and branches are re-encoded, and what is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/patching/entry_decode.hpp"
#include "runtime/patching/entry_reloc.hpp"

using namespace callmon::rt;

namespace {

constexpr uintptr_t kFrom = 0x401000;
constexpr uintptr_t kTo = 0x400000;  // the trampoline's code, below the function

std::vector<uint8_t> rel32(uintptr_t end, uintptr_t target) {
  int32_t d = static_cast<int32_t>(static_cast<int64_t>(target - end));
  std::vector<uint8_t> v(4);
  std::memcpy(v.data(), &d, 4);
  return v;
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

class EntryReloc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* err = entry_decoder_error()) GTEST_SKIP() << err;
  }
  // Relocates `code` (the function's bytes, all of it available) from kFrom to kTo.
  const char* reloc(const std::vector<uint8_t>& code, uintptr_t to = kTo) {
    return entry_relocate(code.data(), code.size(), kFrom, to, &r_);
  }
  std::vector<uint8_t> out() const { return {r_.code, r_.code + r_.len}; }
  Relocated r_;
};

TEST_F(EntryReloc, PlainInstructionsAreCopiedAndJumpBack) {
  // push %r12; mov %rdi,%rax; push %rbp (fib at -O2)
  std::vector<uint8_t> code = {0x41, 0x54, 0x48, 0x89, 0xf8, 0x55, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 5u);
  EXPECT_EQ(out(), cat({{0x41, 0x54, 0x48, 0x89, 0xf8, 0xe9}, rel32(kTo + 10, kFrom + 5)}));
}

TEST_F(EntryReloc, RipRelativeLeaKeepsItsTarget) {
  // lea 0xfd1(%rip),%rax: target kFrom + 7 + 0xfd1
  std::vector<uint8_t> code = {0x48, 0x8d, 0x05, 0xd1, 0x0f, 0x00, 0x00, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 7u);
  EXPECT_EQ(out(), cat({{0x48, 0x8d, 0x05}, rel32(kTo + 7, kFrom + 7 + 0xfd1), {0xe9},
                        rel32(kTo + 12, kFrom + 7)}));
}

TEST_F(EntryReloc, RipRelativeMov) {
  // mov 0x100(%rip),%eax (6 bytes)
  std::vector<uint8_t> code = {0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 6u);
  EXPECT_EQ(out(), cat({{0x8b, 0x05}, rel32(kTo + 6, kFrom + 6 + 0x100), {0xe9},
                        rel32(kTo + 11, kFrom + 6)}));
}

TEST_F(EntryReloc, RipRelativeCmpWithImmediateAfterTheDisplacement) {
  // cmpb $0x7,0x200(%rip) (7 bytes: the displacement, then the immediate)
  std::vector<uint8_t> code = {0x80, 0x3d, 0x00, 0x02, 0x00, 0x00, 0x07, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 7u);
  EXPECT_EQ(out(), cat({{0x80, 0x3d}, rel32(kTo + 7, kFrom + 7 + 0x200), {0x07, 0xe9},
                        rel32(kTo + 12, kFrom + 7)}));
}

TEST_F(EntryReloc, RipRelativeSseLoad) {
  // movdqa 0xee54(%rip),%xmm0 (66 0f 6f 05 disp32: capstone 4 misplaces its displacement)
  std::vector<uint8_t> code = {0x66, 0x0f, 0x6f, 0x05, 0x54, 0xee, 0x00, 0x00, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 8u);
  EXPECT_EQ(out(), cat({{0x66, 0x0f, 0x6f, 0x05}, rel32(kTo + 8, kFrom + 8 + 0xee54), {0xe9},
                        rel32(kTo + 13, kFrom + 8)}));
}

TEST_F(EntryReloc, ShortConditionalBranchBecomesRel32) {
  // test %edi,%edi; je +0x10; push %rbx
  std::vector<uint8_t> code = {0x85, 0xff, 0x74, 0x10, 0x53, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 5u);
  EXPECT_EQ(out(), cat({{0x85, 0xff, 0x0f, 0x84}, rel32(kTo + 8, kFrom + 4 + 0x10), {0x53, 0xe9},
                        rel32(kTo + 14, kFrom + 5)}));
}

TEST_F(EntryReloc, JumpThunkNeedsNoJumpBack) {
  std::vector<uint8_t> code = cat({{0xe9}, rel32(kFrom + 5, 0x402000)});
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(out(), cat({{0xe9}, rel32(kTo + 5, 0x402000)}));
}

TEST_F(EntryReloc, FinalCallPushesTheOriginalReturnAddress) {
  // push %rbx; call 0x403000
  std::vector<uint8_t> code = cat({{0x53, 0xe8}, rel32(kFrom + 6, 0x403000), {0x5b, 0xc3}});
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 6u);
  // push %rbx; push q(%rip); jmp 0x403000; padding; q = kFrom + 6
  std::vector<uint8_t> o = out();
  ASSERT_EQ(o.size(), 24u);
  EXPECT_EQ(std::vector<uint8_t>(o.begin(), o.begin() + 3), (std::vector<uint8_t>{0x53, 0xff, 0x35}));
  int32_t d;
  std::memcpy(&d, o.data() + 3, 4);
  EXPECT_EQ(7 + d, 16);  // the quad, after the code, 8-aligned
  EXPECT_EQ(std::vector<uint8_t>(o.begin() + 7, o.begin() + 12), cat({{0xe9}, rel32(kTo + 12, 0x403000)}));
  uint64_t q;
  std::memcpy(&q, o.data() + 16, 8);
  EXPECT_EQ(q, kFrom + 6);
}

TEST_F(EntryReloc, Refusals) {
  EXPECT_NE(reloc({0x55, 0xc3}), nullptr);  // too short
  // ret in the first bytes, code after it
  EXPECT_STREQ(reloc({0xc3, 0x90, 0x90, 0x90, 0x90, 0x90}), "it returns within its first 5 bytes");
  // call *%rax, then more: its return address would be in the replaced bytes
  EXPECT_NE(reloc({0xff, 0xd0, 0x90, 0x90, 0x90, 0xc3}), nullptr);
  // loop rel8
  EXPECT_NE(reloc({0xe2, 0xfe, 0x90, 0x90, 0x90, 0xc3}), nullptr);
  // a branch among the moved instructions into them: dec %edi; jne -4 (to the dec); nop
  EXPECT_STREQ(reloc({0x90, 0xff, 0xcf, 0x75, 0xfc, 0x90, 0xc3}),
               "a branch in its first bytes jumps into the bytes the patch replaces");
  // RIP-relative target out of reach of the trampoline
  std::vector<uint8_t> lea = {0x48, 0x8d, 0x05, 0xd1, 0x0f, 0x00, 0x00, 0xc3};
  EXPECT_NE(reloc(lea, 0x7f0000000000), nullptr);
  // int3
  EXPECT_NE(reloc({0xcc, 0x90, 0x90, 0x90, 0x90, 0xc3}), nullptr);
}

TEST_F(EntryReloc, BranchIntoTheReplacedBytesIsFound) {
  // f: push %rbx (1); mov %rdi,%rbx (3); L: dec %rbx (3) ; jne L ; ret  -- L at +4 (replaced)
  std::vector<uint8_t> body = {0x53, 0x48, 0x89, 0xfb, 0x48, 0xff, 0xcb, 0x75, 0xfb, 0x5b, 0xc3};
  EXPECT_EQ(entry_branch_into(body.data(), body.size(), kFrom, kFrom + 1, kFrom + 7), kFrom + 7);
  // The same loop starting after the replaced bytes: nothing found.
  EXPECT_EQ(entry_branch_into(body.data(), body.size(), kFrom, kFrom + 1, kFrom + 4), 0u);
}

}  // namespace

TEST_F(EntryReloc, InstructionBoundariesForAttach) {
  // xor %eax,%eax; syscall; add $0,%rax; ret: every moved instruction copied at its own
  // offset, the jump back at 8.
  std::vector<uint8_t> code = {0x31, 0xc0, 0x0f, 0x05, 0x48, 0x83, 0xc0, 0x00, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 8u);
  ASSERT_EQ(r_.bounds, 3u);
  EXPECT_EQ(r_.bound_from[0], 2u);
  EXPECT_EQ(r_.bound_to[0], 2u);
  EXPECT_EQ(r_.bound_from[1], 4u);
  EXPECT_EQ(r_.bound_to[1], 4u);
  EXPECT_EQ(r_.bound_from[2], 8u);
  EXPECT_EQ(r_.bound_to[2], 8u);
  EXPECT_EQ(r_.code[8], 0xe9);
}

TEST_F(EntryReloc, BoundariesFollowAGrownInstruction) {
  // jne +0x10 (2 bytes, becomes 6); push %rbp; push %rbx; push %r12 (2): boundaries after the
  // branch move by 4 in the copy.
  std::vector<uint8_t> code = {0x75, 0x10, 0x55, 0x53, 0x41, 0x54, 0xc3, 0xc3};
  ASSERT_EQ(reloc(code), nullptr);
  EXPECT_EQ(r_.displaced, 6u);
  ASSERT_EQ(r_.bounds, 4u);
  EXPECT_EQ(r_.bound_from[0], 2u);
  EXPECT_EQ(r_.bound_to[0], 6u);
  EXPECT_EQ(r_.bound_from[3], 6u);
  EXPECT_EQ(r_.bound_to[3], 10u);
}
