// Decoding of the instructions the execution monitor emulates (monitor/emulate.hpp). capstone
// is loaded on first use: these fail if it cannot be (every kind would be kStep, length 0).
#include "monitor/emulate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using callmon::monitor::AluOp;
using callmon::monitor::decode_instruction;
using callmon::monitor::EmuKind;
using callmon::monitor::Emulation;

namespace {

Emulation decode(std::vector<uint8_t> bytes, uint64_t addr = 0x401000) {
  bytes.resize(16, 0x90);  // what follows the instruction does not matter
  return decode_instruction(bytes.data(), bytes.size(), addr);
}

TEST(MonitorEmulate, PushRbpIsOneByte) {
  Emulation e = decode({0x55});
  EXPECT_EQ(e.kind, EmuKind::kPush);
  EXPECT_EQ(e.length, 1);
}

TEST(MonitorEmulate, MovRbpRsp) {
  Emulation e = decode({0x48, 0x89, 0xe5});
  EXPECT_EQ(e.kind, EmuKind::kMovRR);
  EXPECT_EQ(e.length, 3);
  EXPECT_EQ(e.width, 8);
}

TEST(MonitorEmulate, SubRspImmediate) {
  Emulation e = decode({0x48, 0x83, 0xec, 0x10});
  EXPECT_EQ(e.kind, EmuKind::kAluRI);
  EXPECT_EQ(e.op, AluOp::kSub);
  EXPECT_EQ(e.imm, 0x10);
  EXPECT_EQ(e.length, 4);
}

TEST(MonitorEmulate, CallRelativeHasAbsoluteTarget) {
  // call +0x20 at 0x401000: 5 bytes, target 0x401025.
  Emulation e = decode({0xe8, 0x20, 0x00, 0x00, 0x00});
  EXPECT_EQ(e.kind, EmuKind::kCall);
  EXPECT_EQ(e.length, 5);
  EXPECT_EQ(e.imm, 0x401025);
}

TEST(MonitorEmulate, Endbr64IsSkipped) {
  Emulation e = decode({0xf3, 0x0f, 0x1e, 0xfa});
  EXPECT_EQ(e.kind, EmuKind::kSkip);
  EXPECT_EQ(e.length, 4);
}

TEST(MonitorEmulate, UnemulatedInstructionKeepsItsLength) {
  // cpuid (0f a2): decoded, not emulated; the length still comes from capstone.
  Emulation e = decode({0x0f, 0xa2});
  EXPECT_EQ(e.kind, EmuKind::kStep);
  EXPECT_EQ(e.length, 2);
}

}  // namespace
