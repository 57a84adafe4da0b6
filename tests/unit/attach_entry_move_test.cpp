// Attach with --patch (attach/entry_move.hpp): a thread stopped inside a function's first
// bytes goes to the same instruction in the trampoline's copy, also when the kernel will
// back it up over an interrupted `syscall` when it resumes.
#include <gtest/gtest.h>

#include <vector>

#include "attach/entry_move.hpp"

using namespace callmon::attach;
using callmon::attach_abi::Patch;

namespace {

// xor %eax,%eax (2); syscall (2); add $0,%rax (4): displaced 8, the copy's instructions at
// the same offsets, its jump back at 8.
Patch entry_patch(uint64_t addr, uint64_t copy) {
  Patch p{};
  p.addr = addr;
  p.len = 5;
  p.kind = callmon::attach_abi::kEntryJump;
  p.copy = copy;
  p.displaced = 8;
  p.boundaries = 3;
  p.from[0] = 2, p.to[0] = 2;
  p.from[1] = 4, p.to[1] = 4;
  p.from[2] = 8, p.to[2] = 8;
  return p;
}

user_regs_struct at(uint64_t rip, int64_t rax = 0, int64_t orig_rax = -1) {
  user_regs_struct r{};
  r.rip = rip;
  r.rax = static_cast<unsigned long long>(rax);
  r.orig_rax = static_cast<unsigned long long>(orig_rax);
  return r;
}

const std::vector<Patch> kPatches = {entry_patch(0x1000, 0x9000), entry_patch(0x2000, 0xa000)};

}  // namespace

TEST(EntryMove, ThreadOutsideIsLeftAlone) {
  for (uint64_t rip : {0x0fffull, 0x1000ull, 0x1005ull, 0x1008ull, 0x1fffull, 0x3000ull}) {
    auto r = at(rip);
    EXPECT_EQ(move_out_of_entry(kPatches, &r), EntryMove::kNone) << std::hex << rip;
    EXPECT_EQ(r.rip, rip);
  }
}

TEST(EntryMove, ThreadInsideGoesToTheCopy) {
  auto r = at(0x2002);
  EXPECT_EQ(move_out_of_entry(kPatches, &r), EntryMove::kMoved);
  EXPECT_EQ(r.rip, 0xa002u);
  r = at(0x1004);
  EXPECT_EQ(move_out_of_entry(kPatches, &r), EntryMove::kMoved);
  EXPECT_EQ(r.rip, 0x9004u);
}

TEST(EntryMove, BlockedSystemCallRestartsInTheCopy) {
  // Stopped in read(2) at the `syscall` at +2: rip past it (+4), -ERESTARTSYS. Mapped from
  // +4, so the kernel's back-up lands on the copy's `syscall`.
  auto r = at(0x1004, -512, 0);
  EXPECT_TRUE(restarts_syscall(r));
  EXPECT_EQ(move_out_of_entry(kPatches, &r), EntryMove::kMoved);
  EXPECT_EQ(r.rip, 0x9004u);
  // rip at +6 (a `syscall` at +4) restarting: it would resume at +4, inside.
  Patch p = entry_patch(0x1000, 0x9000);
  p.from[1] = 6, p.to[1] = 6;
  std::vector<Patch> one = {p};
  r = at(0x1006, -514, 0);
  EXPECT_EQ(move_out_of_entry(one, &r), EntryMove::kMoved);
  EXPECT_EQ(r.rip, 0x9006u);
  // Past the jump's bytes and not restarting: left.
  r = at(0x1006, 3, 0);
  EXPECT_FALSE(restarts_syscall(r));
  EXPECT_EQ(move_out_of_entry(one, &r), EntryMove::kNone);
}

TEST(EntryMove, InsideButNotAtAListedInstructionIsStepped) {
  auto r = at(0x1003);
  EXPECT_EQ(move_out_of_entry(kPatches, &r), EntryMove::kUnknown);
  EXPECT_EQ(r.rip, 0x1003u);
}

TEST(EntryMove, SledPatchesAreNotEntries) {
  Patch p = entry_patch(0x1000, 0x9000);
  p.kind = callmon::attach_abi::kSledCall;
  std::vector<Patch> one = {p};
  auto r = at(0x1002);
  EXPECT_EQ(move_out_of_entry(one, &r), EntryMove::kNone);
}

// A signal handler's saved pc (move_saved_pc): no system-call restart applies (the kernel
// backed the pc up before the handler ran); a sled's interior goes past the sled.
TEST(EntryMove, SavedPcOfASignalFrame) {
  size_t at_index = 99;
  uint64_t pc = 0x2002;  // the `syscall` of an interrupted, restarting read
  EXPECT_EQ(move_saved_pc(kPatches, &pc, &at_index), EntryMove::kMoved);
  EXPECT_EQ(pc, 0xa002u);
  EXPECT_EQ(at_index, 1u);
  pc = 0x1003;  // no listed instruction starts there: the patch must be dropped
  EXPECT_EQ(move_saved_pc(kPatches, &pc, &at_index), EntryMove::kUnknown);
  EXPECT_EQ(pc, 0x1003u);
  EXPECT_EQ(at_index, 0u);
  for (uint64_t outside : {0x0fffull, 0x1000ull, 0x1005ull, 0x3000ull}) {
    pc = outside;
    EXPECT_EQ(move_saved_pc(kPatches, &pc, &at_index), EntryMove::kNone) << std::hex << outside;
    EXPECT_EQ(pc, outside);
  }
  Patch sled = entry_patch(0x1000, 0);
  sled.kind = callmon::attach_abi::kSledCall;
  std::vector<Patch> one = {sled};
  pc = 0x1003;
  EXPECT_EQ(move_saved_pc(one, &pc, &at_index), EntryMove::kMoved);
  EXPECT_EQ(pc, 0x1005u);
}
