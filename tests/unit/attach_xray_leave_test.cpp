// Detach from an XRay build (attach/xray_leave.hpp): a pc between a patched sled's `mov` and
// its call/jmp (a stopped thread's, or one a signal frame saved) goes where the compiled
// sled takes a thread: past an entry or tail sled, to an exit sled's `ret`.
#include "attach/xray_leave.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using callmon::attach::leave_xray_pc;
using callmon::attach_abi::Patch;

Patch sled(uint64_t addr, bool exit) {
  Patch p{};
  p.addr = addr;
  p.len = 11;
  p.kind = callmon::attach_abi::kXraySled;
  const uint8_t entry_bytes[11] = {0xeb, 0x09, 0x66, 0x0f, 0x1f, 0x84, 0, 0, 2, 0, 0};
  const uint8_t exit_bytes[11] = {0xc3, 0x66, 0x0f, 0x1f, 0x84, 0, 0, 2, 0, 0, 0xcc};
  std::memcpy(p.old_bytes, exit ? exit_bytes : entry_bytes, 11);
  const uint8_t ours[11] = {0x41, 0xba, 1, 0, 0, 0, exit ? uint8_t(0xe9) : uint8_t(0xe8), 0, 0, 0, 0};
  std::memcpy(p.new_bytes, ours, 11);
  return p;
}

TEST(AttachXrayLeave, EntrySledPastIt) {
  std::vector<Patch> patches = {sled(0x1000, false), sled(0x1040, true)};
  uint64_t pc = 0x1006;  // after the mov, before the call
  EXPECT_TRUE(leave_xray_pc(patches, &pc));
  EXPECT_EQ(pc, 0x100bu);
}

TEST(AttachXrayLeave, ExitSledToItsRet) {
  std::vector<Patch> patches = {sled(0x1000, false), sled(0x1040, true)};
  uint64_t pc = 0x1046;
  EXPECT_TRUE(leave_xray_pc(patches, &pc));
  EXPECT_EQ(pc, 0x1040u);
}

TEST(AttachXrayLeave, BoundariesAndOtherKindsLeftAlone) {
  std::vector<Patch> patches = {sled(0x1000, false), sled(0x1040, true)};
  Patch entry{};  // --patch's jump: entry_move.hpp's business
  entry.addr = 0x2000;
  entry.len = 5;
  entry.kind = callmon::attach_abi::kEntryJump;
  patches.push_back(entry);
  Patch dropped = sled(0x3000, false);  // forgotten by the attach (len 0)
  dropped.len = 0;
  patches.push_back(dropped);
  for (uint64_t at : {0x0fffull, 0x1000ull, 0x100bull, 0x1040ull, 0x104bull, 0x2002ull,
                      0x3006ull}) {
    uint64_t pc = at;
    EXPECT_FALSE(leave_xray_pc(patches, &pc)) << std::hex << at;
    EXPECT_EQ(pc, at);
  }
}

}  // namespace
