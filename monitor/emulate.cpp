// Instruction decoding with capstone and emulation on a user_regs_struct. Register slots are
// the x86 encoding numbers (rax=0 ... r15=15); only 32- and 64-bit general registers are
// emulated, anything with a 8/16-bit operand, a prefix or another segment is single-stepped.
#include "monitor/emulate.hpp"

#include <capstone/capstone.h>
#include <dlfcn.h>

#include <cstring>
#include <utility>

#include "monitor/tracee_memory.hpp"

namespace callmon::monitor {
namespace {

unsigned long long& slot_ref(user_regs_struct& r, int slot) {
  switch (slot) {
    case 0: return r.rax;
    case 1: return r.rcx;
    case 2: return r.rdx;
    case 3: return r.rbx;
    case 4: return r.rsp;
    case 5: return r.rbp;
    case 6: return r.rsi;
    case 7: return r.rdi;
    case 8: return r.r8;
    case 9: return r.r9;
    case 10: return r.r10;
    case 11: return r.r11;
    case 12: return r.r12;
    case 13: return r.r13;
    case 14: return r.r14;
    default: return r.r15;
  }
}

// capstone register id -> (slot, width in bytes); width 0 when not emulated.
std::pair<int, int> reg_slot(unsigned reg) {
  static const unsigned k64[16] = {X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX,
                                   X86_REG_RSP, X86_REG_RBP, X86_REG_RSI, X86_REG_RDI,
                                   X86_REG_R8,  X86_REG_R9,  X86_REG_R10, X86_REG_R11,
                                   X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15};
  static const unsigned k32[16] = {X86_REG_EAX,  X86_REG_ECX,  X86_REG_EDX,  X86_REG_EBX,
                                   X86_REG_ESP,  X86_REG_EBP,  X86_REG_ESI,  X86_REG_EDI,
                                   X86_REG_R8D,  X86_REG_R9D,  X86_REG_R10D, X86_REG_R11D,
                                   X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D};
  for (int i = 0; i < 16; ++i) {
    if (reg == k64[i]) return {i, 8};
    if (reg == k32[i]) return {i, 4};
  }
  return {-1, 0};
}

bool decode_mem(const cs_x86_op& op, MemOperand& out) {
  if (op.mem.segment == X86_REG_FS)
    out.fs = true;
  else if (op.mem.segment != X86_REG_INVALID)
    return false;
  if (op.mem.base == X86_REG_RIP) {
    out.base = kRip;
  } else if (op.mem.base != X86_REG_INVALID) {
    auto [slot, width] = reg_slot(op.mem.base);
    if (width != 8) return false;
    out.base = static_cast<int8_t>(slot);
  }
  if (op.mem.index != X86_REG_INVALID) {
    auto [slot, width] = reg_slot(op.mem.index);
    if (width != 8) return false;
    out.index = static_cast<int8_t>(slot);
  }
  out.scale = static_cast<uint8_t>(op.mem.scale);
  out.disp = op.mem.disp;
  return true;
}

bool reg_operand(const cs_x86_op& op, int8_t& slot, uint8_t& width) {
  if (op.type != X86_OP_REG) return false;
  auto [s, w] = reg_slot(op.reg);
  if (w == 0) return false;
  slot = static_cast<int8_t>(s);
  width = static_cast<uint8_t>(w);
  return true;
}

// Fills `e` for the decoded instruction; false when it is not an emulated form.
bool classify(const cs_insn& insn, Emulation& e) {
  const cs_x86& x = insn.detail->x86;
  if (insn.id == X86_INS_NOP) {
    e.kind = EmuKind::kSkip;
    return true;
  }
  for (uint8_t p : x.prefix)
    if (p != 0) return false;
  const cs_x86_op* op = x.operands;
  uint8_t w2 = 0;
  switch (insn.id) {
    case X86_INS_PUSH:
    case X86_INS_POP:
      if (x.op_count != 1 || !reg_operand(op[0], e.dst, e.width) || e.width != 8) return false;
      e.kind = insn.id == X86_INS_PUSH ? EmuKind::kPush : EmuKind::kPop;
      return true;
    case X86_INS_MOV:
    case X86_INS_MOVABS:
      if (x.op_count != 2) return false;
      if (op[0].type == X86_OP_REG) {
        if (!reg_operand(op[0], e.dst, e.width)) return false;
        if (op[1].type == X86_OP_REG) {
          if (!reg_operand(op[1], e.src, w2) || w2 != e.width) return false;
          e.kind = EmuKind::kMovRR;
        } else if (op[1].type == X86_OP_IMM) {
          e.imm = op[1].imm;
          e.kind = EmuKind::kMovRI;
        } else {
          if (op[1].size != e.width || !decode_mem(op[1], e.mem)) return false;
          e.kind = EmuKind::kLoad;
        }
        return true;
      }
      if (op[0].type == X86_OP_MEM && reg_operand(op[1], e.src, e.width) &&
          op[0].size == e.width && decode_mem(op[0], e.mem)) {
        e.kind = EmuKind::kStore;
        return true;
      }
      return false;
    case X86_INS_LEA:
      if (x.op_count != 2 || !reg_operand(op[0], e.dst, e.width) || op[1].type != X86_OP_MEM ||
          !decode_mem(op[1], e.mem) || e.mem.fs)
        return false;
      e.kind = EmuKind::kLea;
      return true;
    case X86_INS_ADD: e.op = AluOp::kAdd; break;
    case X86_INS_SUB: e.op = AluOp::kSub; break;
    case X86_INS_AND: e.op = AluOp::kAnd; break;
    case X86_INS_OR: e.op = AluOp::kOr; break;
    case X86_INS_XOR: e.op = AluOp::kXor; break;
    case X86_INS_CMP: e.op = AluOp::kCmp; break;
    case X86_INS_TEST: e.op = AluOp::kTest; break;
    case X86_INS_JMP:
    case X86_INS_CALL:
      if (x.op_count != 1 || op[0].type != X86_OP_IMM) return false;
      e.imm = op[0].imm;
      e.kind = insn.id == X86_INS_JMP ? EmuKind::kJmp : EmuKind::kCall;
      return true;
    case X86_INS_RET:
      if (x.op_count != 0) return false;
      e.kind = EmuKind::kRet;
      return true;
    default:
      return false;
  }
  // The ALU forms: reg, reg or reg, imm.
  if (x.op_count != 2 || !reg_operand(op[0], e.dst, e.width)) return false;
  if (op[1].type == X86_OP_IMM) {
    e.imm = op[1].imm;
    e.kind = EmuKind::kAluRI;
    return true;
  }
  if (!reg_operand(op[1], e.src, w2) || w2 != e.width) return false;
  e.kind = EmuKind::kAluRR;
  return true;
}

// capstone is loaded on first use rather than linked: its tables carry ~77 000 relative
// relocations, which the dynamic loader applied at every start of every callmon command
// (~10 ms, most of `callmon --help`), while only `callmon monitor` decodes instructions.
struct Capstone {
  decltype(&cs_open) open = nullptr;
  decltype(&cs_option) option = nullptr;
  decltype(&cs_disasm) disasm = nullptr;
  decltype(&cs_free) free = nullptr;
  csh handle = 0;
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// The loaded library with an x86-64 handle in detail mode; handle 0 when capstone cannot
// be loaded or opened (then nothing is emulated: every displaced instruction is stepped).
const Capstone& capstone() {
  static const Capstone cs = [] {
    Capstone c;
    void* lib = dlopen(CALLMON_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib || !bind(lib, "cs_open", c.open) || !bind(lib, "cs_option", c.option) ||
        !bind(lib, "cs_disasm", c.disasm) || !bind(lib, "cs_free", c.free))
      return Capstone{};
    if (c.open(CS_ARCH_X86, CS_MODE_64, &c.handle) != CS_ERR_OK) return Capstone{};
    c.option(c.handle, CS_OPT_DETAIL, CS_OPT_ON);
    return c;
  }();
  return cs;
}

uint64_t mem_address(const MemOperand& m, const user_regs_struct& r, uint64_t next_rip) {
  auto& rr = const_cast<user_regs_struct&>(r);
  uint64_t a = static_cast<uint64_t>(m.disp);
  if (m.base == kRip)
    a += next_rip;
  else if (m.base >= 0)
    a += slot_ref(rr, m.base);
  if (m.index >= 0) a += slot_ref(rr, m.index) * m.scale;
  if (m.fs) a += r.fs_base;
  return a;
}

constexpr unsigned long long kCF = 1, kPF = 4, kAF = 16, kZF = 64, kSF = 128, kOF = 2048;

// Computes op(a, b) at `width` bytes and the flags it sets, as the CPU does (AF is left 0
// for the logical operations, where it is architecturally undefined).
uint64_t alu(AluOp op, uint64_t a, uint64_t b, int width, unsigned long long& eflags) {
  const int bits = width * 8;
  const uint64_t mask = width == 8 ? ~0ULL : 0xffffffffULL;
  a &= mask;
  b &= mask;
  uint64_t r = 0;
  unsigned long long f = 0;
  switch (op) {
    case AluOp::kAdd:
      r = (a + b) & mask;
      if (r < a) f |= kCF;
      if ((((a ^ r) & (b ^ r)) >> (bits - 1)) & 1) f |= kOF;
      if (((a ^ b ^ r) >> 4) & 1) f |= kAF;
      break;
    case AluOp::kSub:
    case AluOp::kCmp:
      r = (a - b) & mask;
      if (a < b) f |= kCF;
      if ((((a ^ b) & (a ^ r)) >> (bits - 1)) & 1) f |= kOF;
      if (((a ^ b ^ r) >> 4) & 1) f |= kAF;
      break;
    case AluOp::kAnd:
    case AluOp::kTest: r = a & b; break;
    case AluOp::kOr: r = a | b; break;
    case AluOp::kXor: r = a ^ b; break;
  }
  if (r == 0) f |= kZF;
  if ((r >> (bits - 1)) & 1) f |= kSF;
  if (__builtin_parity(static_cast<unsigned>(r & 0xff)) == 0) f |= kPF;
  eflags = (eflags & ~(kCF | kPF | kAF | kZF | kSF | kOF)) | f;
  return r;
}

void write_reg(user_regs_struct& r, int slot, int width, uint64_t value) {
  // A 32-bit destination clears the upper half of the register, as on the CPU.
  slot_ref(r, slot) = width == 8 ? value : (value & 0xffffffffULL);
}

}  // namespace

Emulation decode_instruction(const uint8_t* code, size_t size, uint64_t addr) {
  Emulation e;
  // endbr64 (f3 0f 1e fa) is first in every function built with -fcf-protection; decoded by
  // hand because capstone 4 predates CET.
  static const uint8_t kEndbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  if (size >= 4 && std::memcmp(code, kEndbr64, 4) == 0) {
    e.kind = EmuKind::kSkip;
    e.length = 4;
    return e;
  }
  const Capstone& cs = capstone();
  if (cs.handle == 0) return e;
  cs_insn* insn = nullptr;
  size_t n = cs.disasm(cs.handle, code, size, addr, 1, &insn);
  if (n != 1) return e;
  e.length = static_cast<uint8_t>(insn[0].size);
  if (!classify(insn[0], e)) {
    uint8_t length = e.length;
    e = Emulation{};
    e.length = length;
  }
  cs.free(insn, n);
  return e;
}

bool apply_emulation(const Emulation& e, user_regs_struct& r, const TraceeMemory& mem) {
  const uint64_t next = r.rip + e.length;
  const int w = e.width;
  switch (e.kind) {
    case EmuKind::kStep:
      return false;
    case EmuKind::kSkip:
      break;
    case EmuKind::kPush: {
      uint64_t value = slot_ref(r, e.dst);
      if (!mem.write(r.rsp - 8, &value, 8)) return false;
      r.rsp -= 8;
      break;
    }
    case EmuKind::kPop: {
      uint64_t value = 0;
      if (!mem.read(r.rsp, &value, 8)) return false;
      r.rsp += 8;
      slot_ref(r, e.dst) = value;  // after the increment: pop %rsp loads the popped value
      break;
    }
    case EmuKind::kMovRR:
      write_reg(r, e.dst, w, slot_ref(r, e.src));
      break;
    case EmuKind::kMovRI:
      write_reg(r, e.dst, w, static_cast<uint64_t>(e.imm));
      break;
    case EmuKind::kLoad: {
      uint64_t value = 0;
      if (!mem.read(mem_address(e.mem, r, next), &value, static_cast<size_t>(w))) return false;
      write_reg(r, e.dst, w, value);
      break;
    }
    case EmuKind::kStore: {
      uint64_t value = slot_ref(r, e.src);
      if (!mem.write(mem_address(e.mem, r, next), &value, static_cast<size_t>(w))) return false;
      break;
    }
    case EmuKind::kLea:
      write_reg(r, e.dst, w, mem_address(e.mem, r, next));
      break;
    case EmuKind::kAluRR:
    case EmuKind::kAluRI: {
      uint64_t b = e.kind == EmuKind::kAluRI ? static_cast<uint64_t>(e.imm) : slot_ref(r, e.src);
      uint64_t result = alu(e.op, slot_ref(r, e.dst), b, w, r.eflags);
      if (e.op != AluOp::kCmp && e.op != AluOp::kTest) write_reg(r, e.dst, w, result);
      break;
    }
    case EmuKind::kJmp:
      r.rip = static_cast<uint64_t>(e.imm);
      return true;
    case EmuKind::kCall: {
      if (!mem.write(r.rsp - 8, &next, 8)) return false;
      r.rsp -= 8;
      r.rip = static_cast<uint64_t>(e.imm);
      return true;
    }
    case EmuKind::kRet: {
      uint64_t target = 0;
      if (!mem.read(r.rsp, &target, 8)) return false;
      r.rsp += 8;
      r.rip = target;
      return true;
    }
  }
  r.rip = next;
  return true;
}

}  // namespace callmon::monitor
