// Emulation of the instruction a breakpoint displaced. When the tracee stops on an int3, the
// monitor can either put the original byte back, single-step and re-arm (two stops, and a
// window in which other threads run past the unarmed address), or apply the instruction's
// effect to the registers itself and resume after it (one stop, breakpoint never unarmed).
// This file decodes an instruction once, with capstone, into a compact form when it is one of
// the common function-entry and statement-start instructions (endbr64, nop, push, pop, mov,
// lea, add/sub/and/or/xor/cmp/test, jmp, call, ret), and applies it at each hit.
#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>

namespace callmon::monitor {

class TraceeMemory;

enum class EmuKind : uint8_t {
  kStep,      // not emulated: single-step the original instruction
  kSkip,      // no architectural effect (nop, endbr64)
  kPush,      // push reg64
  kPop,       // pop reg64
  kMovRR,     // mov reg, reg (32 or 64 bits)
  kMovRI,     // mov reg, imm
  kLoad,      // mov reg, [mem]
  kStore,     // mov [mem], reg
  kLea,       // lea reg, [mem]
  kAluRR,     // add/sub/and/or/xor/cmp/test reg, reg
  kAluRI,     // the same with an immediate
  kJmp,       // jmp rel
  kCall,      // call rel
  kRet,       // ret
};

enum class AluOp : uint8_t { kAdd, kSub, kAnd, kOr, kXor, kCmp, kTest };

// A memory operand: segment fs or none, base and index as register slots (-1: none; kRip for
// RIP-relative), scale and displacement.
struct MemOperand {
  int8_t base = -1;
  int8_t index = -1;
  uint8_t scale = 1;
  bool fs = false;
  int64_t disp = 0;
};

struct Emulation {
  EmuKind kind = EmuKind::kStep;
  AluOp op = AluOp::kAdd;
  uint8_t length = 0;  // bytes of the original instruction
  uint8_t width = 8;   // operand size in bytes: 4 or 8
  int8_t dst = -1;     // register slot (see emulate.cpp)
  int8_t src = -1;
  int64_t imm = 0;     // immediate, or the absolute target of jmp/call
  MemOperand mem;
};

inline constexpr int8_t kRip = 100;

// Decodes the instruction at tracee address `addr` from `code` (up to `size` bytes, original
// bytes, no breakpoint in them). kind is kStep when it is not one of the emulated forms or
// cannot be decoded; length is then whatever capstone found (0 if nothing).
Emulation decode_instruction(const uint8_t* code, size_t size, uint64_t addr);

// Applies `emu` of the instruction at regs.rip to `regs` (and to tracee memory for push, call
// and stores) and leaves regs.rip after it. False, with nothing changed, when a memory access
// fails: the caller then single-steps instead.
bool apply_emulation(const Emulation& emu, user_regs_struct& regs, const TraceeMemory& mem);

}  // namespace callmon::monitor
