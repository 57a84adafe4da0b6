// .eh_frame for entry trampolines (see entry_cfi.hpp).
#include "runtime/patching/entry_cfi.hpp"

#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/patching/entry_decode.hpp"

namespace callmon::rt {

namespace {

// DWARF register numbers of x86-64's registers in encoding order (rax rcx rdx rbx rsp rbp
// rsi rdi, r8..r15).
constexpr uint8_t kDwarfReg[16] = {0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15};
constexpr uint8_t kDwarfRsp = 7, kDwarfRbp = 6, kDwarfRa = 16;

enum : uint8_t {
  kCfaAdvanceLoc1 = 0x02,
  kCfaUndefined = 0x07,
  kCfaDefCfa = 0x0c,
  kCfaDefCfaRegister = 0x0d,
  kCfaDefCfaOffset = 0x0e,
  kCfaAdvanceLoc = 0x40,
  kCfaOffset = 0x80,
};

class Out {
 public:
  Out(uint8_t* p, size_t cap) : p_(p), cap_(cap) {}
  void byte(uint8_t b) {
    if (n_ < cap_) p_[n_] = b;
    ++n_;
  }
  void uleb(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      byte(v ? b | 0x80 : b);
    } while (v);
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  size_t size() const { return n_; }
  bool ok() const { return n_ <= cap_; }
  uint8_t* at(size_t k) { return p_ + k; }

 private:
  uint8_t* p_;
  size_t cap_, n_ = 0;
};

// What an instruction does to the stack pointer and the frame pointer, read from its bytes.
struct StackEffect {
  int64_t grow = 0;       // bytes the stack grows by (push, sub $imm,%rsp)
  int saved_reg = -1;     // push of a general register: its number 0..15
  bool fp_from_sp = false;  // mov %rsp,%rbp
  bool sp_unknown = false;  // writes %rsp otherwise
  bool fp_unknown = false;  // writes %rbp otherwise
};

StackEffect stack_effect(const uint8_t* c, size_t len) {
  StackEffect e;
  size_t i = 0;
  while (i < len && (c[i] == 0x66 || c[i] == 0x67 || c[i] == 0xf0 || c[i] == 0xf2 ||
                     c[i] == 0xf3 || c[i] == 0x2e || c[i] == 0x3e || c[i] == 0x26 ||
                     c[i] == 0x36 || c[i] == 0x64 || c[i] == 0x65))
    ++i;
  uint8_t rex = 0;
  if (i < len && (c[i] & 0xf0) == 0x40) rex = c[i++];
  if (i >= len) return e;
  const uint8_t op = c[i];
  const bool has_modrm = i + 1 < len;
  const uint8_t modrm = has_modrm ? c[i + 1] : 0;
  const uint8_t mod = modrm >> 6, reg = ((modrm >> 3) & 7) | ((rex & 4) << 1),
                rm = (modrm & 7) | ((rex & 1) << 3);
  if (op >= 0x50 && op <= 0x57) {
    e.grow = 8;
    e.saved_reg = (op - 0x50) | ((rex & 1) << 3);
    return e;
  }
  if (op >= 0x58 && op <= 0x5f) {  // pop
    int r = (op - 0x58) | ((rex & 1) << 3);
    e.grow = -8;
    e.sp_unknown = r == 4;
    e.fp_unknown = r == 5;
    return e;
  }
  if (op == 0x6a || op == 0x68 || op == 0x9c) {  // push imm, pushf
    e.grow = 8;
    return e;
  }
  if (op == 0x9d) {
    e.grow = -8;
    return e;
  }
  if (op == 0xff && has_modrm && ((modrm >> 3) & 7) == 6) {  // push r/m (a moved call's)
    e.grow = 8;
    return e;
  }
  if ((op == 0x83 || op == 0x81) && has_modrm && mod == 3 && rm == 4 && (rex & 8)) {
    const uint8_t sub = (modrm >> 3) & 7;
    int64_t imm = 0;
    if (op == 0x83 && i + 2 < len) imm = static_cast<int8_t>(c[i + 2]);
    else if (op == 0x81 && i + 5 < len) {
      int32_t v;
      memcpy(&v, c + i + 2, 4);
      imm = v;
    }
    if (sub == 5) e.grow = imm;
    else if (sub == 0) e.grow = -imm;
    else e.sp_unknown = true;  // and $-16,%rsp, ...
    return e;
  }
  if (op == 0x89 && has_modrm && mod == 3 && reg == 4 && rm == 5) {  // mov %rsp,%rbp
    e.fp_from_sp = true;
    return e;
  }
  if (op == 0x8b && has_modrm && mod == 3 && reg == 5 && rm == 4) {  // mov %rsp,%rbp
    e.fp_from_sp = true;
    return e;
  }
  if (op == 0xc9) {  // leave
    e.sp_unknown = e.fp_unknown = true;
    return e;
  }
  // Other writes of a general register: r/m destinations, reg destinations.
  const bool rm_dest = has_modrm && mod == 3 &&
                       (op == 0x01 || op == 0x09 || op == 0x11 || op == 0x19 || op == 0x21 ||
                        op == 0x29 || op == 0x31 || op == 0x81 || op == 0x83 || op == 0x89 ||
                        op == 0xc7 || op == 0xc1 || op == 0xd1 || op == 0xd3 || op == 0xf7 ||
                        op == 0x87 || op == 0xff);
  const bool reg_dest = has_modrm && (op == 0x03 || op == 0x0b || op == 0x13 || op == 0x1b ||
                                      op == 0x23 || op == 0x2b || op == 0x33 || op == 0x8b ||
                                      op == 0x8d || op == 0x87);
  const int dest = rm_dest ? rm : reg_dest ? reg : (op >= 0xb8 && op <= 0xbf) ? ((op - 0xb8) | ((rex & 1) << 3)) : -1;
  if (dest == 4) e.sp_unknown = true;
  if (dest == 5) e.fp_unknown = true;
  if (op == 0x94 || op == 0x95) e.sp_unknown = e.fp_unknown = true;  // xchg with rax
  return e;
}

// jmp *disp(%rip) (ff /4), past prefixes and REX.
bool is_jmp_mem(const uint8_t* c, size_t len) {
  size_t i = 0;
  while (i + 1 < len && (c[i] == 0x66 || c[i] == 0x2e || c[i] == 0x3e || c[i] == 0xf2 ||
                         c[i] == 0xf3 || (c[i] & 0xf0) == 0x40))
    ++i;
  return i + 1 < len && c[i] == 0xff && ((c[i + 1] >> 3) & 7) == 4;
}

using RegisterFrame = void (*)(void*);

RegisterFrame register_frame() {
  static RegisterFrame fn = nullptr;
  static bool tried = false;
  if (tried) return fn;
  tried = true;
  // glibc's own dlopen, past the runtime's interposer (interpose_process.cpp), which would
  // run a patch pass (its lock is held here: the pass calls this); dlvsym is not
  // interposed. The loader notices the new module at the next pass as usual.
  using DlopenFn = void* (*)(const char*, int);
  auto real_dlopen = reinterpret_cast<DlopenFn>(dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34"));
  if (!real_dlopen) real_dlopen = reinterpret_cast<DlopenFn>(dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5"));
  if (!real_dlopen) return nullptr;
  void* lib = real_dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return nullptr;
  fn = reinterpret_cast<RegisterFrame>(dlvsym(lib, "__register_frame", "GCC_3.0"));
  return fn;
}

}  // namespace

size_t entry_cfi_program(const uint8_t* copy, size_t cap, uintptr_t copy_at, uint8_t* out,
                         size_t out_cap, size_t* range) {
  Out o(out, out_cap);
  const size_t head = kTrampCodeOffset - kTrampEntry;  // the trampoline's code before the copy
  int64_t cfa = 8;         // CFA = base + cfa
  bool fp_based = false;   // base: %rsp, or %rbp after `mov %rsp,%rbp`
  size_t loc = 0;          // the program's location, from the FDE's start
  bool saved[16] = {};
  size_t n = 0;
  *range = head;
  auto advance = [&](size_t to) {
    size_t d = to - loc;
    if (d == 0) return;
    if (d < 64) o.byte(static_cast<uint8_t>(kCfaAdvanceLoc | d));
    else {
      o.byte(kCfaAdvanceLoc1);
      o.byte(static_cast<uint8_t>(d));
    }
    loc = to;
  };
  // The trampoline's own code (entry_tramp.hpp): the function's entry state up to its `lea`,
  // which drops the return address (kept in the shadow stack): from there to the copy,
  // which the trampoline calls and which returns there, the return address is undefined
  // and an unwinder ends its walk (the copy's own return address is the trampoline's +21,
  // whose row is this one). The copy starts in the entry state again (entered by the call
  // or by the jump, a return address at CFA - 8 either way).
  advance(kTrampDropsReturn - kTrampEntry);
  o.byte(kCfaUndefined);
  o.uleb(kDwarfRa);
  advance(head);
  o.byte(static_cast<uint8_t>(kCfaOffset | kDwarfRa));
  o.uleb(1);
  while (n < cap) {
    Insn in;
    if (!entry_decode(copy + n, cap - n, copy_at + n, &in)) break;
    const StackEffect e = stack_effect(copy + n, in.len);
    const size_t end = head + n + in.len;
    *range = end;  // the state before the instruction is described: its start is covered
    if ((e.sp_unknown && !fp_based) || (e.fp_unknown && fp_based)) break;
    if (!fp_based && e.grow) {
      cfa += e.grow;
      advance(end);
      o.byte(kCfaDefCfaOffset);
      o.uleb(static_cast<uint64_t>(cfa));
    }
    if (e.saved_reg >= 0 && !saved[e.saved_reg] && e.saved_reg != 4) {
      // The value pushed sits at the new stack pointer, CFA - (CFA offset after the push).
      saved[e.saved_reg] = true;
      advance(end);
      o.byte(static_cast<uint8_t>(kCfaOffset | kDwarfReg[e.saved_reg]));
      o.uleb(static_cast<uint64_t>(cfa / 8));
    }
    if (e.fp_from_sp && !fp_based) {
      fp_based = true;
      advance(end);
      o.byte(kCfaDefCfaRegister);
      o.uleb(kDwarfRbp);
    }
    n += in.len;
    // The copy ends with a jump back, a moved jump or return: nothing after it is code.
    if (in.kind == InsnKind::kJmp || in.kind == InsnKind::kRet || in.kind == InsnKind::kJmpInd ||
        (in.kind == InsnKind::kRipMem && is_jmp_mem(copy + n - in.len, in.len)))
      break;
  }
  return o.ok() ? o.size() : SIZE_MAX;
}

bool entry_cfi_register(const TrampPool& pool) {
  if (!pool.base || pool.used <= kTrampEntry) return false;
  RegisterFrame reg = register_frame();
  if (!reg) return false;
  const size_t slots = (pool.used - kTrampHead) / kTrampSlot;
  const size_t size = (32 + slots * 96 + 8 + 4095) & ~size_t{4095};
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  auto* buf = static_cast<uint8_t*>(p);
  Out o(buf, size);
  // The CIE: version 1, no augmentation (absolute 8-byte pc fields), code alignment 1,
  // data alignment -8, return address column 16; CFA = %rsp + 8, return address at CFA - 8.
  const size_t cie = 0;
  o.u32(0);  // length, below
  o.u32(0);  // CIE id
  o.byte(1);
  o.byte(0);  // augmentation ""
  o.uleb(1);
  o.byte(0x78);  // sleb -8
  o.uleb(kDwarfRa);
  o.byte(kCfaDefCfa);
  o.uleb(kDwarfRsp);
  o.uleb(8);
  o.byte(static_cast<uint8_t>(kCfaOffset | kDwarfRa));
  o.uleb(1);
  while ((o.size() - cie) % 8) o.byte(0);  // DW_CFA_nop
  {
    uint32_t len = static_cast<uint32_t>(o.size() - cie - 4);
    memcpy(o.at(cie), &len, 4);
  }
  for (size_t k = 0; k < slots; ++k) {
    const uint8_t* slot = pool.base + kTrampHead + k * kTrampSlot;
    if (slot[kTrampEntry] != 0xff || slot[kTrampEntry + 1] != 0x15) continue;
    uint8_t prog[64];
    size_t range;
    const size_t plen = entry_cfi_program(slot + kTrampCodeOffset, kTrampFnOffset - kTrampCodeOffset,
                                          reinterpret_cast<uintptr_t>(slot + kTrampCodeOffset),
                                          prog, sizeof prog, &range);
    if (plen == SIZE_MAX) continue;  // no FDE: the unwinder stops there, as before
    const size_t fde = o.size();
    if (fde + 32 + plen + 8 + 4 > size) break;
    o.u32(0);
    o.u32(static_cast<uint32_t>(fde + 4 - cie));  // back to the CIE
    o.u64(reinterpret_cast<uintptr_t>(slot + kTrampEntry));
    o.u64(range);
    for (size_t i = 0; i < plen; ++i) o.byte(prog[i]);
    while ((o.size() - fde) % 8) o.byte(0);
    uint32_t len = static_cast<uint32_t>(o.size() - fde - 4);
    memcpy(o.at(fde), &len, 4);
  }
  o.u32(0);  // the end of the table
  if (!o.ok()) {
    munmap(p, size);
    return false;
  }
  reg(buf);  // kept for good: the trampolines stay mapped
  return true;
}

}  // namespace callmon::rt
