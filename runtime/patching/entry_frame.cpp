// The frame-moving check of entry patching (entry_frame.hpp).
#include "runtime/patching/entry_frame.hpp"

#include "runtime/patching/entry_length.hpp"

namespace callmon::rt {

namespace {

// `mov (%rsp),reg` (8b /r, ModRM rm 100 with a SIB of base rsp and no index) or a `pop`.
bool reads_return_address(const uint8_t* p, size_t n) {
  if (n >= 4 && p[0] >= 0x40 && p[0] <= 0x4f) {  // REX
    if (p[1] == 0x8b && (p[2] & 0xc7) == 0x04 && p[3] == 0x24) return true;
    return p[0] == 0x41 && p[1] >= 0x58 && p[1] <= 0x5f;  // pop %r8..%r15
  }
  if (n >= 3 && p[0] == 0x8b && (p[1] & 0xc7) == 0x04 && p[2] == 0x24) return true;
  return n >= 1 && p[0] >= 0x58 && p[0] <= 0x5f;
}

// Whether the instruction (`len` bytes, its opcode at `op_at`) loads rsp from a register
// other than rsp and rbp, 64-bit: `mov %reg,%rsp` (89 /r or 8b /r) or `lea d(%reg),%rsp`
// (8d /r). rbp is left out: `mov %rbp,%rsp` and `lea d(%rbp),%rsp` end compiled frames.
bool loads_sp(const uint8_t* p, size_t len, size_t op_at) {
  if (op_at == 0 || op_at == 0xff || op_at + 1 >= len) return false;
  const uint8_t rex = p[op_at - 1];
  if ((rex & 0xf8) != 0x48) return false;  // REX.W
  const uint8_t op = p[op_at], modrm = p[op_at + 1];
  const unsigned mod = modrm >> 6;
  const unsigned reg = ((modrm >> 3) & 7) | ((rex & 4u) << 1);
  unsigned rm = (modrm & 7) | ((rex & 1u) << 3);
  auto other = [](unsigned r) { return r != 4 && r != 5; };
  if (op == 0x89) return mod == 3 && rm == 4 && other(reg);
  if (op == 0x8b) return mod == 3 && reg == 4 && other(rm);
  if (op != 0x8d || reg != 4 || mod == 3) return false;
  if ((modrm & 7) == 4) {  // SIB: its base
    if (op_at + 2 >= len) return false;
    const uint8_t sib = p[op_at + 2];
    if (mod == 0 && (sib & 7) == 5) return false;  // no base
    rm = (sib & 7) | ((rex & 1u) << 3);
  } else if (mod == 0 && (modrm & 7) == 5) {
    return false;  // RIP-relative
  }
  return other(rm);
}

}  // namespace

bool entry_moves_frame(const uint8_t* code, size_t size) {
  if (!reads_return_address(code, size)) return false;
  for (size_t off = 0; off < size;) {
    size_t op_at;
    const size_t n = entry_insn_length(code + off, size - off, &op_at);
    if (n == 0) return false;
    if (loads_sp(code + off, n, op_at)) return true;
    off += n;
  }
  return false;
}

}  // namespace callmon::rt
