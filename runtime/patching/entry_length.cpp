// x86-64 instruction lengths (see entry_length.hpp). The tables follow the Intel SDM's
// opcode maps for 64-bit mode.
#include "runtime/patching/entry_length.hpp"

namespace callmon::rt {

namespace {

// Bytes of ModRM, SIB and displacement from the ModRM byte at `p` (`n` bytes readable);
// 0 when they run past.
size_t modrm_len(const uint8_t* p, size_t n) {
  if (n < 1) return 0;
  const uint8_t m = p[0], mod = m >> 6, rm = m & 7;
  size_t len = 1;
  if (mod == 3) return len;
  if (rm == 4) {
    if (n < 2) return 0;
    const uint8_t base = p[1] & 7;
    len += 1;
    if (mod == 0 && base == 5) len += 4;
  } else if (mod == 0 && rm == 5) {
    len += 4;  // RIP-relative
  }
  if (mod == 1) len += 1;
  else if (mod == 2) len += 4;
  return len <= n ? len : 0;
}

enum : uint8_t {
  kNone = 0,   // no ModRM, no immediate
  kM = 1,      // ModRM
  kI8 = 2,     // imm8
  kIz = 4,     // imm16/32 (16 with 0x66)
  kBad = 8,    // unknown here (invalid in 64-bit mode, or rare): capstone decides
  kI16 = 16,   // imm16
};

// The one-byte map (prefix bytes and 0x0f handled before the table).
constexpr uint8_t kMap1[256] = {
    // 00
    kM, kM, kM, kM, kI8, kIz, kBad, kBad, kM, kM, kM, kM, kI8, kIz, kBad, kBad,
    // 10
    kM, kM, kM, kM, kI8, kIz, kBad, kBad, kM, kM, kM, kM, kI8, kIz, kBad, kBad,
    // 20
    kM, kM, kM, kM, kI8, kIz, kBad, kBad, kM, kM, kM, kM, kI8, kIz, kBad, kBad,
    // 30
    kM, kM, kM, kM, kI8, kIz, kBad, kBad, kM, kM, kM, kM, kI8, kIz, kBad, kBad,
    // 40 (REX, handled before)
    kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad, kBad,
    // 50
    kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone,
    // 60: 63 movsxd, 68 push imm32, 69 imul imm32, 6a push imm8, 6b imul imm8, 6c-6f ins/outs
    kBad, kBad, kBad, kM, kBad, kBad, kBad, kBad, kIz, kM | kIz, kI8, kM | kI8, kNone, kNone, kNone, kNone,
    // 70 jcc rel8
    kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8,
    // 80
    kM | kI8, kM | kIz, kBad, kM | kI8, kM, kM, kM, kM, kM, kM, kM, kM, kM, kM, kM, kM,
    // 90 (9a invalid)
    kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kBad, kNone, kNone, kNone, kNone, kNone,
    // a0 (a0-a3 moffs: handled before)
    kBad, kBad, kBad, kBad, kNone, kNone, kNone, kNone, kI8, kIz, kNone, kNone, kNone, kNone, kNone, kNone,
    // b0 (b8-bf: imm64 with REX.W, handled before)
    kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kIz, kIz, kIz, kIz, kIz, kIz, kIz, kIz,
    // c0: c2 ret imm16, c4/c5 VEX (before), c8 enter (before), ca lret imm16
    kM | kI8, kM | kI8, kI16, kNone, kBad, kBad, kM | kI8, kM | kIz, kBad, kNone, kI16, kNone, kNone, kI8, kBad, kNone,
    // d0
    kM, kM, kM, kM, kBad, kBad, kBad, kNone, kM, kM, kM, kM, kM, kM, kM, kM,
    // e0: loop/jrcxz rel8, in/out imm8, call/jmp rel32, jmp rel8
    kI8, kI8, kI8, kI8, kI8, kI8, kI8, kI8, kIz, kIz, kBad, kI8, kNone, kNone, kNone, kNone,
    // f0 (f0, f2, f3 prefixes before; f6/f7 before)
    kBad, kNone, kBad, kBad, kNone, kNone, kBad, kBad, kNone, kNone, kNone, kNone, kNone, kNone, kM, kM,
};

// The two-byte map (0f xx).
uint8_t map2(uint8_t op) {
  if (op == 0x0f || op == 0x04 || op == 0x0a || op == 0x0c || op == 0x24 || op == 0x25 ||
      op == 0x26 || op == 0x27 || op == 0x36 || op == 0x39 || (op >= 0x3b && op <= 0x3f) ||
      op == 0x7a || op == 0x7b || op == 0xa6 || op == 0xa7 || op == 0x78 || op == 0x79 ||
      op == 0xb9 || op == 0xff || (op >= 0x20 && op <= 0x23))
    return kBad;  // 3DNow!, invalid, rare (extrq/insertq, vmread/vmwrite, ud0/ud1, mov
                  // to/from control and debug registers: decoders differ on their ModRM)
  if (op <= 0x03) return kM;
  if (op == 0x05 || op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x0b ||
      op == 0x0e)
    return kNone;
  if (op == 0x0d || (op >= 0x10 && op <= 0x23) || (op >= 0x28 && op <= 0x2f)) return kM;
  if (op >= 0x30 && op <= 0x37) return kNone;
  if (op >= 0x40 && op <= 0x6f) return kM;
  if (op >= 0x70 && op <= 0x73) return kM | kI8;
  if (op >= 0x74 && op <= 0x76) return kM;
  if (op == 0x77) return kNone;
  if (op >= 0x7c && op <= 0x7f) return kM;
  if (op >= 0x80 && op <= 0x8f) return kIz;  // jcc rel32
  if (op >= 0x90 && op <= 0x9f) return kM;
  if (op == 0xa0 || op == 0xa1 || op == 0xa2 || op == 0xa8 || op == 0xa9 || op == 0xaa) return kNone;
  if (op == 0xa4 || op == 0xac || op == 0xba || op == 0xc2 || (op >= 0xc4 && op <= 0xc6)) return kM | kI8;
  if (op >= 0xc8 && op <= 0xcf) return kNone;
  return kM;  // a3 a5 ab ad ae af b0-b9 bb-bf c0 c1 c3 c7 d0-ff
}

// Immediate bytes of a VEX/EVEX instruction in map `map` with opcode `op`.
int vex_imm(uint8_t map, uint8_t op) {
  if (map == 3) return 1;
  if (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6))) return 1;
  return 0;
}

}  // namespace

size_t entry_insn_length(const uint8_t* c, size_t avail, size_t* opcode_at) {
  const size_t n = avail < 15 ? avail : 15;
  size_t i = 0;
  bool opsize = false, addrsize = false;
  while (i < n && is_legacy_prefix(c[i])) {
    opsize |= c[i] == 0x66;
    addrsize |= c[i] == 0x67;
    ++i;
  }
  uint8_t rex = 0;
  if (i < n && (c[i] & 0xf0) == 0x40) rex = c[i++];
  if (i >= n) return 0;
  const uint8_t op = c[i];
  *opcode_at = i;
  auto finish = [&](size_t at, uint8_t kind) -> size_t {
    // `at`: the byte after the opcode.
    if (kind & kBad) return 0;
    size_t len = at;
    if (kind & kM) {
      size_t m = modrm_len(c + at, n - at);
      if (!m) return 0;
      len += m;
    }
    if (kind & kI8) len += 1;
    if (kind & kI16) len += 2;
    if (kind & kIz) len += opsize ? 2 : 4;
    return len <= n ? len : 0;
  };
  if (op == 0xc4 || op == 0xc5 || op == 0x62) {
    if (rex || opsize || i > 0) {
      // A legacy 66 is part of no VEX/EVEX instruction; leave the odd cases to capstone.
      return 0;
    }
    *opcode_at = 0xff;
    size_t at;
    uint8_t map;
    if (op == 0xc5) {
      if (n < 3) return 0;
      map = 1;
      at = 2;
    } else if (op == 0xc4) {
      if (n < 4) return 0;
      map = c[1] & 0x1f;
      at = 3;
    } else {
      if (n < 5) return 0;
      map = c[1] & 0x07;
      if (c[1] & 0x08 || !(c[2] & 0x04)) return 0;  // not an AVX-512 EVEX form
      at = 4;
    }
    if (map < 1 || map > 3) return 0;
    const uint8_t vop = c[at];
    if (op != 0x62 && map == 1 && vop == 0x77) return at + 1;  // vzeroupper/vzeroall
    return finish(at + 1, static_cast<uint8_t>(kM | (vex_imm(map, vop) ? kI8 : 0)));
  }
  if (op == 0x0f) {
    if (i + 1 >= n) return 0;
    const uint8_t op2 = c[i + 1];
    if (op2 == 0x38) return i + 2 < n ? finish(i + 3, kM) : 0;
    if (op2 == 0x3a) return i + 2 < n ? finish(i + 3, kM | kI8) : 0;
    if (op2 >= 0x80 && op2 <= 0x8f && opsize) return 0;
    return finish(i + 2, map2(op2));
  }
  if (op >= 0xa0 && op <= 0xa3) {  // mov with a 64-bit (32 with 0x67) absolute address
    const size_t len = i + 1 + (addrsize ? 4 : 8);
    return len <= n ? len : 0;
  }
  if (op >= 0xb8 && op <= 0xbf && (rex & 8)) return i + 9 <= n ? i + 9 : 0;
  if (op == 0xc8) return i + 4 <= n ? i + 4 : 0;  // enter imm16, imm8
  if (op == 0xe8 || op == 0xe9) {
    if (opsize) return 0;
    return finish(i + 1, kIz);
  }
  if (op == 0xf6 || op == 0xf7) {
    if (i + 1 >= n) return 0;
    const uint8_t reg = (c[i + 1] >> 3) & 7;
    const uint8_t imm = reg <= 1 ? (op == 0xf6 ? kI8 : kIz) : kNone;
    return finish(i + 1, static_cast<uint8_t>(kM | imm));
  }
  if (op == 0x8f && i + 1 < n && ((c[i + 1] >> 3) & 7) != 0) return 0;  // XOP
  return finish(i + 1, kMap1[op]);
}

bool is_legacy_prefix(uint8_t b) {
  switch (b) {
    case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
    case 0x2e: case 0x3e: case 0x26: case 0x36: case 0x64: case 0x65:
      return true;
    default:
      return false;
  }
}

}  // namespace callmon::rt
