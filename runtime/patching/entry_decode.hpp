// Decoding the first instructions of a function for entry patching (docs/patching.md,
// "Entry patching"): how long each is and what moving it elsewhere takes. capstone gives
// the length and the RIP-relative operands; the branches are told apart by their opcode
// bytes here, so the relocation (entry_reloc.hpp) never depends on capstone's naming.
// capstone is dlopen'ed by its SONAME on first use, like the monitor does (see
// monitor/emulate.cpp): linking it would cost every program its relocations.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

enum class InsnKind : uint8_t {
  kPlain,       // position-independent: copied as it is
  kRipMem,      // a RIP-relative memory operand: copied with its displacement adjusted
  kJmp,         // jmp rel8 / rel32
  kJcc,         // jcc rel8 / rel32
  kCall,        // call rel32
  kCallRipInd,  // call *disp32(%rip)
  kCallReg,     // call *%reg
  kRet,         // ret / ret imm16
  kJmpInd,      // jmp *%reg or *mem without RIP (copied; control does not come back)
  kUnmovable,   // anything else that depends on where it runs, or ends the thread's flow
};

struct Insn {
  uint8_t len = 0;
  InsnKind kind = InsnKind::kPlain;
  uint8_t disp_offset = 0;  // kRipMem, kCallRipInd: offset of the 32-bit displacement
  uint8_t cc = 0;           // kJcc: the condition (low 4 bits of the opcode)
  uint8_t reg = 0;          // kCallReg: register number 0..15
  bool rel_branch = false;  // has a relative target (also loop/jrcxz/xbegin, kUnmovable)
  uintptr_t target = 0;     // a relative branch's target; kRipMem/kCallRipInd: the address
  const char* why = nullptr;  // kUnmovable: what it is
};

// nullptr when the decoder is usable, else why not (capstone missing, with dlerror's text).
// Loads capstone on first call (dlopen and capstone allocate through the program's malloc,
// once: the caller marks that as the runtime's work, RuntimeScope). Callers serialise (the
// patcher's lock).
const char* entry_decoder_error();

// Decodes the instruction at `code` (at most `avail` bytes readable), which runs at `addr`.
// False when the bytes are no valid x86-64 instruction. entry_decoder_error() must be null.
bool entry_decode(const uint8_t* code, size_t avail, uintptr_t addr, Insn* out);

// The cheaper decoding of the module-wide sweep for branch targets (entry_targets.hpp):
// only the length of the instruction at `code` (running at `addr`) and, for a relative
// jmp, jcc, call, loop/jrcxz or xbegin, its target (else 0). The table decoder of
// entry_length.hpp, and capstone without operand details for what it does not know.
// False when the bytes are no valid instruction. entry_decoder_error() must be null.
bool entry_decode_branch(const uint8_t* code, size_t avail, uintptr_t addr, uint8_t* len,
                         uintptr_t* target);

// Decodes [a, end) linearly with entry_decode_branch (in memory at the addresses it runs
// at), calling visit(a, len, target) for each instruction; a byte it cannot decode (data or
// padding in the code) is skipped, resynchronising on the next. Returns how many
// instructions were decoded. The sweeps for branch targets and V8's tail jumps.
template <class Visit>
size_t entry_sweep(uintptr_t a, uintptr_t end, Visit visit) {
  size_t insns = 0;
  while (a < end) {
    uint8_t len = 0;
    uintptr_t target = 0;
    if (!entry_decode_branch(reinterpret_cast<const uint8_t*>(a), end - a, a, &len, &target) ||
        len == 0) {
      ++a;
      continue;
    }
    ++insns;
    visit(a, len, target);
    a += len;
  }
  return insns;
}

}  // namespace callmon::rt
