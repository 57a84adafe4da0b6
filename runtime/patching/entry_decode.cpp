// Instruction decoding for entry patching (see entry_decode.hpp).
#include "runtime/patching/entry_decode.hpp"
#include "runtime/patching/entry_length.hpp"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <string.h>

#include "runtime/core/libc_dlsym.hpp"

#ifndef CALLMON_CAPSTONE_SONAME
#define CALLMON_CAPSTONE_SONAME "libcapstone.so.4"
#endif

namespace callmon::rt {

namespace {

struct Capstone {
  decltype(&cs_open) open = nullptr;
  decltype(&cs_option) option = nullptr;
  decltype(&cs_malloc) malloc_insn = nullptr;
  decltype(&cs_disasm_iter) iter = nullptr;
  csh handle = 0;
  cs_insn* insn = nullptr;
  csh lean = 0;  // without operand details, for the sweep (entry_decode_branch)
  cs_insn* lean_insn = nullptr;
  bool tried = false;
  char error[300] = {};
};
Capstone g_cs;

template <class F>
bool bind(void* lib, const char* name, F& f) {
  // The C library's dlsym: the runtime's would run a patch pass for the dlopen of capstone
  // while this pass holds the patcher's lock.
  DlsymFn sym = libc_dlsym();
  f = sym ? reinterpret_cast<F>(sym(lib, name)) : nullptr;
  return f != nullptr;
}

void load() {
  g_cs.tried = true;
  void* lib = dlopen(CALLMON_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
  const char* err = nullptr;
  if (!lib) err = dlerror();
  else if (!bind(lib, "cs_open", g_cs.open) || !bind(lib, "cs_option", g_cs.option) ||
           !bind(lib, "cs_malloc", g_cs.malloc_insn) || !bind(lib, "cs_disasm_iter", g_cs.iter))
    err = "a function is missing from it";
  else if (g_cs.open(CS_ARCH_X86, CS_MODE_64, &g_cs.handle) != CS_ERR_OK)
    err = "cs_open failed";
  else if (g_cs.option(g_cs.handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK ||
           !(g_cs.insn = g_cs.malloc_insn(g_cs.handle)))
    err = "cs_option/cs_malloc failed";
  else if (g_cs.open(CS_ARCH_X86, CS_MODE_64, &g_cs.lean) != CS_ERR_OK ||
           !(g_cs.lean_insn = g_cs.malloc_insn(g_cs.lean)))
    err = "cs_open/cs_malloc failed (second handle)";
  if (!err) return;
  char* p = g_cs.error;
  size_t cap = sizeof g_cs.error;
  const char* head = "cannot load capstone (" CALLMON_CAPSTONE_SONAME "): ";
  size_t n = strlen(head);
  memcpy(p, head, n < cap ? n : cap - 1);
  size_t m = strlen(err);
  if (n + m >= cap) m = cap - n - 1;
  memcpy(p + n, err, m);
  p[n + m] = 0;
  g_cs.insn = nullptr;
}

// The target of a relative branch whose opcode starts at code[i] of an instruction of
// `size` bytes ending at `next`; 0 when it is none.
uintptr_t branch_target(const uint8_t* code, size_t i, size_t size, uintptr_t next) {
  const uint8_t op = code[i];
  const uint8_t op2 = i + 1 < size ? code[i + 1] : 0;
  const bool short_form = op == 0xeb || (op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3);
  const bool long_form = op == 0xe8 || op == 0xe9 || (op == 0x0f && op2 >= 0x80 && op2 <= 0x8f) ||
                         (op == 0xc7 && op2 == 0xf8);
  if (short_form) return next + static_cast<intptr_t>(static_cast<int8_t>(code[size - 1]));
  if (!long_form || size < 5) return 0;
  int32_t d;
  memcpy(&d, code + size - 4, 4);
  return next + static_cast<intptr_t>(d);
}

}  // namespace

bool entry_decode_branch(const uint8_t* code, size_t avail, uintptr_t addr, uint8_t* len,
                         uintptr_t* target) {
  *len = 0;
  *target = 0;
  size_t opcode_at;
  if (size_t n = entry_insn_length(code, avail, &opcode_at)) {
    *len = static_cast<uint8_t>(n);
    if (opcode_at != 0xff) *target = branch_target(code, opcode_at, n, addr + n);
    return true;
  }
  if (!g_cs.lean_insn || avail == 0) return false;  // an encoding it does not know: capstone
  const uint8_t* p = code;
  size_t size = avail > 15 ? 15 : avail;
  uint64_t a = addr;
  if (!g_cs.iter(g_cs.lean, &p, &size, &a, g_cs.lean_insn)) return false;
  const size_t n = g_cs.lean_insn->size;
  *len = static_cast<uint8_t>(n);
  size_t i = 0;
  while (i < n && is_legacy_prefix(code[i])) ++i;
  if (i < n && (code[i] & 0xf0) == 0x40) ++i;
  if (i < n) *target = branch_target(code, i, n, addr + n);
  return true;
}

const char* entry_decoder_error() {
  if (!g_cs.tried) load();
  return g_cs.insn ? nullptr : g_cs.error;
}

bool entry_decode(const uint8_t* code, size_t avail, uintptr_t addr, Insn* out) {
  *out = Insn{};
  if (!g_cs.insn || avail == 0) return false;
  const uint8_t* p = code;
  size_t size = avail > 15 ? 15 : avail;
  uint64_t a = addr;
  if (!g_cs.iter(g_cs.handle, &p, &size, &a, g_cs.insn)) return false;
  const cs_insn& in = *g_cs.insn;
  const cs_x86& x = in.detail->x86;
  out->len = static_cast<uint8_t>(in.size);
  const uintptr_t next = addr + in.size;

  // The opcode, past legacy prefixes and REX (VEX/EVEX instructions are no branches).
  size_t i = 0;
  bool opsize = false;
  while (i < in.size && is_legacy_prefix(code[i])) opsize |= code[i++] == 0x66;
  uint8_t rex = 0;
  if (i < in.size && (code[i] & 0xf0) == 0x40) rex = code[i++];
  if (i >= in.size) return false;
  const uint8_t op = code[i];
  const uint8_t op2 = i + 1 < in.size ? code[i + 1] : 0;
  auto rel8 = [&] { return next + static_cast<intptr_t>(static_cast<int8_t>(code[in.size - 1])); };
  auto rel32 = [&] {
    int32_t d;
    memcpy(&d, code + in.size - 4, 4);
    return next + static_cast<intptr_t>(d);
  };
  auto unmovable = [&](const char* why) {
    out->kind = InsnKind::kUnmovable;
    out->why = why;
    return true;
  };

  // Relative branches, by opcode. A 16-bit operand size would truncate the target.
  if (op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
      (op == 0x0f && op2 >= 0x80 && op2 <= 0x8f) || (op >= 0xe0 && op <= 0xe3)) {
    out->rel_branch = true;
    bool short_form = op == 0xeb || (op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3);
    out->target = short_form ? rel8() : rel32();
    if (opsize) return unmovable("a branch with a 16-bit operand size");
    if (op == 0xe8) out->kind = InsnKind::kCall;
    else if (op == 0xe9 || op == 0xeb) out->kind = InsnKind::kJmp;
    else if (op >= 0xe0 && op <= 0xe3) return unmovable("loop/jrcxz (8-bit reach only)");
    else {
      out->kind = InsnKind::kJcc;
      out->cc = (op == 0x0f ? op2 : op) & 0x0f;
    }
    return true;
  }
  if (op == 0xc7 && op2 == 0xf8) {  // xbegin rel32
    out->rel_branch = true;
    out->target = rel32();
    return unmovable("xbegin");
  }
  if (op == 0xc3 || op == 0xc2) {
    out->kind = InsnKind::kRet;
    return true;
  }
  if (op == 0xcc || op == 0xcd || op == 0xce || op == 0xcf || op == 0xf4 || op == 0xca ||
      op == 0xcb || (op == 0x0f && (op2 == 0x0b || op2 == 0x34 || op2 == 0x07)))
    return unmovable("an interrupt, trap, sysenter or halt");
  // `syscall` (0f 05) is moved: it does the same at any address, and a system call
  // restarted after a signal backs up over the copy's `syscall`, two bytes like the original
  // (an attach parks threads blocked in one there: docs/patching.md, "Attaching").

  const bool rip = [&] {
    for (int k = 0; k < x.op_count; ++k)
      if (x.operands[k].type == X86_OP_MEM && x.operands[k].mem.base == X86_REG_RIP) return true;
    return false;
  }();
  if (rip) {
    // The 4-byte displacement where capstone says, checked against the value it decoded.
    // capstone 4 misplaces it for some SSE forms (`66 0f 6f 05 disp32`, movdqa x(%rip)):
    // then the one place after the opcode holding that value, with at most a 4-byte
    // immediate after it, is taken; none or several: refused.
    int32_t d;
    size_t at = x.encoding.disp_offset;
    bool ok = at > 0 && at + 4u <= in.size && (memcpy(&d, code + at, 4), d == x.disp);
    if (!ok) {
      size_t found = 0, hits = 0;
      for (size_t k = i + 1; k + 4 <= in.size; ++k) {
        memcpy(&d, code + k, 4);
        if (d == x.disp && in.size - (k + 4) <= 4) {
          found = k;
          ++hits;
        }
      }
      if (hits != 1) return unmovable("a RIP-relative operand of an unknown encoding");
      at = found;
    }
    memcpy(&d, code + at, 4);
    out->disp_offset = static_cast<uint8_t>(at);
    out->target = next + static_cast<intptr_t>(d);
  }
  if (op == 0xff && i + 1 < in.size) {
    const uint8_t modrm = code[i + 1];
    const uint8_t reg = (modrm >> 3) & 7;
    if (reg == 2) {  // call r/m
      if (rip) {
        out->kind = InsnKind::kCallRipInd;
        return true;
      }
      if ((modrm >> 6) == 3) {
        out->kind = InsnKind::kCallReg;
        out->reg = static_cast<uint8_t>((modrm & 7) | ((rex & 1) << 3));
        return true;
      }
      return unmovable("an indirect call through memory");
    }
    if (reg == 3 || reg == 5) return unmovable("a far call or jump");
    if (reg == 4) {
      out->kind = rip ? InsnKind::kRipMem : InsnKind::kJmpInd;
      return true;
    }
  }
  out->kind = rip ? InsnKind::kRipMem : InsnKind::kPlain;
  return true;
}

}  // namespace callmon::rt
