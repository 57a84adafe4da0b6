// Prologue relocation for entry patching (see entry_reloc.hpp).
#include "runtime/patching/entry_reloc.hpp"

#include <string.h>

#include "runtime/patching/entry_decode.hpp"

namespace callmon::rt {

namespace {

bool fits32(int64_t d) { return d >= INT32_MIN && d <= INT32_MAX; }

class Emitter {
 public:
  Emitter(Relocated* out, uintptr_t to) : out_(out), to_(to) {}
  bool room(size_t n) const { return out_->len + n <= kRelocMax; }
  uintptr_t here() const { return to_ + out_->len; }
  void bytes(const uint8_t* p, size_t n) {
    memcpy(out_->code + out_->len, p, n);
    out_->len += n;
  }
  void byte(uint8_t b) { out_->code[out_->len++] = b; }
  // A 32-bit displacement at the current end, relative to `end` (the instruction's end),
  // reaching `target`. False when out of reach.
  bool rel32(uintptr_t end, uintptr_t target) {
    int64_t d = static_cast<int64_t>(target - end);
    if (!fits32(d)) return false;
    int32_t v = static_cast<int32_t>(d);
    bytes(reinterpret_cast<const uint8_t*>(&v), 4);
    return true;
  }
  size_t len() const { return out_->len; }
  uint8_t* at(size_t off) { return out_->code + off; }

 private:
  Relocated* out_;
  uintptr_t to_;
};

}  // namespace

const char* entry_relocate(const uint8_t* code, size_t avail, uintptr_t from, uintptr_t to,
                           Relocated* out, size_t pad) {
  *out = Relocated{};
  if (avail + pad < kPatchJmpLen) return "too short: fewer than 5 bytes";
  Emitter e(out, to);
  // A final call's return address, stored after the code: the push reads it there.
  size_t push_fix = 0;
  uintptr_t push_value = 0;
  bool flows_on = true;  // the last instruction moved may fall through: jump back
  uintptr_t target[8];
  int targets = 0;
  size_t n = 0;
  while (n < kPatchJmpLen) {
    if (n == avail) {
      // A short function, all of it moved: the jump may take the padding after it, if
      // control never reaches there (its last instruction returns or jumps away).
      if (flows_on) return "too short: fewer than 5 bytes, and it runs on into the next";
      n = kPatchJmpLen;
      break;
    }
    Insn in;
    if (!entry_decode(code + n, avail - n, from + n, &in)) return "an instruction in its first bytes cannot be decoded";
    if (n + in.len > avail) return "too short: its first instructions run past its end";
    const uintptr_t at = from + n;
    const bool last = n + in.len >= kPatchJmpLen || n + in.len == avail;
    if (in.rel_branch && targets < 8) target[targets++] = in.target;
    if (!e.room(in.len + 16)) return "its first instructions do not fit the trampoline";
    if (n > 0 && out->bounds < sizeof out->bound_from) {
      out->bound_from[out->bounds] = static_cast<uint8_t>(n);
      out->bound_to[out->bounds++] = static_cast<uint8_t>(e.len());
    }
    switch (in.kind) {
      case InsnKind::kPlain:
        e.bytes(code + n, in.len);
        break;
      case InsnKind::kJmpInd:
        e.bytes(code + n, in.len);
        flows_on = false;
        break;
      case InsnKind::kRipMem: {
        size_t start = e.len();
        e.bytes(code + n, in.len);
        int64_t d = static_cast<int64_t>(in.target - (to + start + in.len));
        if (!fits32(d)) return "a RIP-relative operand in its first bytes is out of the trampoline's reach";
        int32_t v = static_cast<int32_t>(d);
        memcpy(e.at(start + in.disp_offset), &v, 4);
        // jmp *disp(%rip): control does not come back.
        size_t k = 0;
        while (k + 1 < in.len && (code[n + k] & 0xf0) == 0x40) ++k;
        if (code[n + k] == 0xff && ((code[n + k + 1] >> 3) & 7) == 4) flows_on = false;
        break;
      }
      case InsnKind::kJmp:
        e.byte(0xe9);
        if (!e.rel32(e.here() + 4, in.target)) return "a jump in its first bytes is out of the trampoline's reach";
        flows_on = false;
        break;
      case InsnKind::kJcc:
        e.byte(0x0f);
        e.byte(static_cast<uint8_t>(0x80 | in.cc));
        if (!e.rel32(e.here() + 4, in.target)) return "a branch in its first bytes is out of the trampoline's reach";
        break;
      case InsnKind::kCall:
      case InsnKind::kCallRipInd:
      case InsnKind::kCallReg: {
        // The callee must return to the original code, after the call: possible only when
        // the call is the last instruction moved (the bytes after it are the function's
        // own, unchanged). `push` of the original return address, then a jump.
        if (!last) return "a call in its first bytes returns into the bytes the patch replaces";
        if (in.kind == InsnKind::kCallReg && in.reg == 4) return "a call through %rsp in its first bytes";
        e.byte(0xff);
        e.byte(0x35);  // push disp32(%rip)
        push_fix = e.len();
        e.bytes(reinterpret_cast<const uint8_t*>("\0\0\0\0"), 4);
        push_value = at + in.len;
        if (in.kind == InsnKind::kCall) {
          e.byte(0xe9);
          if (!e.rel32(e.here() + 4, in.target)) return "a call in its first bytes is out of the trampoline's reach";
        } else if (in.kind == InsnKind::kCallRipInd) {
          e.byte(0xff);
          e.byte(0x25);  // jmp *disp32(%rip)
          if (!e.rel32(e.here() + 4, in.target)) return "a call in its first bytes is out of the trampoline's reach";
        } else {
          if (in.reg >= 8) e.byte(0x41);
          e.byte(0xff);
          e.byte(static_cast<uint8_t>(0xe0 | (in.reg & 7)));  // jmp *%reg
        }
        flows_on = false;
        break;
      }
      case InsnKind::kRet:
        if (!last) return "it returns within its first 5 bytes";
        e.bytes(code + n, in.len);
        flows_on = false;
        break;
      case InsnKind::kUnmovable:
        return in.why ? in.why : "an instruction in its first bytes cannot be moved";
    }
    n += in.len;
    if (!flows_on && n < kPatchJmpLen && n < avail)
      return "control leaves it within its first 5 bytes";
  }
  // A branch among them into the others (a loop at the entry): those bytes are gone.
  for (int k = 0; k < targets; ++k)
    if (target[k] > from && target[k] < from + n)
      return "a branch in its first bytes jumps into the bytes the patch replaces";
  out->displaced = n;
  if (flows_on) {
    if (out->bounds < sizeof out->bound_from) {
      out->bound_from[out->bounds] = static_cast<uint8_t>(n);
      out->bound_to[out->bounds++] = static_cast<uint8_t>(e.len());
    }
    e.byte(0xe9);
    if (!e.rel32(e.here() + 4, from + n)) return "the trampoline is out of reach of the function";
  }
  if (push_fix) {
    // The 8-byte return address, aligned, after the code.
    while (e.len() % 8) e.byte(0xcc);
    size_t data = e.len();
    e.bytes(reinterpret_cast<const uint8_t*>(&push_value), 8);
    int32_t d = static_cast<int32_t>(static_cast<int64_t>(data) - static_cast<int64_t>(push_fix + 4));
    memcpy(e.at(push_fix), &d, 4);
  }
  return nullptr;
}

uintptr_t entry_branch_into(const uint8_t* body, size_t size, uintptr_t fn, uintptr_t lo,
                            uintptr_t hi) {
  size_t off = 0;
  while (off < size) {
    Insn in;
    if (!entry_decode(body + off, size - off, fn + off, &in)) {
      ++off;  // data or padding in the code: resynchronise on the next byte
      continue;
    }
    // A call of the function itself is recursion, not a jump into it.
    if (in.rel_branch && in.target >= lo && in.target < hi &&
        !(in.kind == InsnKind::kCall && in.target == fn))
      return fn + off;
    off += in.len;
  }
  return 0;
}

}  // namespace callmon::rt
