// Breakpoint hits: counting, one-shot removal, timing frames, and resuming the thread past
// the displaced instruction by emulating it or by single-stepping it.
#include <signal.h>
#include <sys/ptrace.h>

#include <algorithm>
#include <climits>

#include "monitor/tracer.hpp"

namespace callmon::monitor {
namespace {

template <class T>
T& grow(std::vector<T>& v, size_t index) {
  if (index >= v.size()) v.resize(index + 1);
  return v[index];
}

}  // namespace

void Tracer::handle_trap(ThreadState& t) {
  if (t.stepping != 0) {
    finish_step(t);
    return;
  }
  Process& p = *t.proc;
  siginfo_t si{};
  user_regs_struct regs{};
  if (ptrace(PTRACE_GETSIGINFO, t.tid, nullptr, &si) != 0 ||
      ptrace(PTRACE_GETREGS, t.tid, nullptr, &regs) != 0) {
    resume(t, 0);
    return;
  }
  // int3 raises SIGTRAP with si_code SI_KERNEL and, being a trap rather than a fault, leaves
  // RIP one byte past the breakpoint.
  if (si.si_code == SI_KERNEL) {
    const uint64_t addr = regs.rip - 1;
    auto it = p.bps.find(addr);
    if (it != p.bps.end() && it->second.armed) {
      handle_breakpoint(t, regs, addr);
      return;
    }
    if (p.retired.count(addr) != 0) {
      // This thread hit the breakpoint before another removed it; its SIGTRAP was queued
      // meanwhile. Run the restored instruction as if nothing happened.
      regs.rip = addr;
      ptrace(PTRACE_SETREGS, t.tid, nullptr, &regs);
      resume(t, 0);
      return;
    }
  }
  resume(t, SIGTRAP);  // the program's own trap
}

void Tracer::handle_breakpoint(ThreadState& t, user_regs_struct& regs, uint64_t addr) {
  Process& p = *t.proc;
  ++p.stops;
  regs.rip = addr;
  Breakpoint* bp = &p.bps.at(addr);
  if (bp->rescan != 0) {
    if (bp->rescan == 1) bp->rescan = 0;
    rescan(p);  // may add elements; references to existing ones stay valid
  }
  if (options_.timing && bp->return_refs > 0) pop_frames(t, regs.rsp, now_ns(), addr);
  if (bp->entry) {
    ++grow(t.hits, bp->unit);
    if (options_.timing) push_frame(t, regs, bp->unit);
    if (options_.one_shot) bp->entry = false;
  }
  if (!bp->entry && bp->return_refs == 0 && bp->rescan == 0 && bp->steppers == 0) {
    drop_if_unused(p, addr);  // the original instruction is back: run it natively
    ptrace(PTRACE_SETREGS, t.tid, nullptr, &regs);
    resume(t, 0);
    return;
  }
  continue_over(t, regs, addr);
}

void Tracer::continue_over(ThreadState& t, user_regs_struct& regs, uint64_t addr) {
  Process& p = *t.proc;
  Breakpoint& bp = p.bps.at(addr);
  if (!options_.single_step_only && bp.emu.kind != EmuKind::kStep &&
      apply_emulation(bp.emu, regs, p.mem)) {
    ++p.emulated;
    ptrace(PTRACE_SETREGS, t.tid, nullptr, &regs);
    resume(t, 0);
    return;
  }
  // Single-step the original instruction. While its byte is back, other threads of the
  // process run through this address without stopping: their hits there are not counted.
  ++p.stepped;
  if (bp.steppers++ == 0) p.mem.write(addr, &bp.orig, 1);
  ptrace(PTRACE_SETREGS, t.tid, nullptr, &regs);
  t.stepping = addr;
  ptrace(PTRACE_SINGLESTEP, t.tid, nullptr, nullptr);
  t.stopped = false;
}

void Tracer::finish_step(ThreadState& t) {
  Process& p = *t.proc;
  const uint64_t addr = t.stepping;
  t.stepping = 0;
  auto it = p.bps.find(addr);
  if (it != p.bps.end() && it->second.steppers > 0 && --it->second.steppers == 0) {
    static const uint8_t kInt3 = 0xcc;
    if (it->second.armed) p.mem.write(addr, &kInt3, 1);
    drop_if_unused(p, addr);
  }
  if (t.alive) {
    const int sig = t.deferred_signal;
    t.deferred_signal = 0;
    resume(t, sig);
  }
}

void Tracer::drop_if_unused(Process& p, uint64_t addr) {
  auto it = p.bps.find(addr);
  if (it == p.bps.end()) return;
  Breakpoint& bp = it->second;
  if (bp.entry || bp.return_refs > 0 || bp.rescan != 0 || bp.steppers > 0) return;
  disarm(p, addr, bp);
  p.bps.erase(it);
}

void Tracer::push_frame(ThreadState& t, const user_regs_struct& regs, uint32_t unit) {
  Process& p = *t.proc;
  uint64_t ret = 0;
  if (!p.mem.read(regs.rsp, &ret, 8)) return;
  // A return breakpoint at the return address; the frame is matched there by the stack
  // pointer (entry rsp + 8 after ret), so recursive activations are told apart.
  auto it = p.bps.find(ret);
  if (it != p.bps.end()) {
    ++it->second.return_refs;
  } else {
    uint8_t code[16];
    if (!read_original(p, ret, code, sizeof code)) return;
    Breakpoint flags;
    flags.return_refs = 1;
    add_breakpoint(p, ret, code, sizeof code, flags);
    if (p.bps.count(ret) == 0) return;
  }
  t.frames.push_back({unit, ret, regs.rsp + 8, now_ns(), 0});
  ++grow(t.active, unit);
  grow(t.total_ns, unit);
  grow(t.self_ns, unit);
}

void Tracer::pop_frames(ThreadState& t, uint64_t sp, uint64_t now, uint64_t keep) {
  Process& p = *t.proc;
  // Every frame whose return stack pointer is at or below the current one has ended: the
  // innermost normally, the others by longjmp or an exception (timed up to now).
  while (!t.frames.empty() && t.frames.back().sp_after <= sp) {
    Frame f = t.frames.back();
    t.frames.pop_back();
    const uint64_t d = now - f.start_ns;
    if (--t.active[f.unit] == 0) t.total_ns[f.unit] += d;  // outermost activation only
    t.self_ns[f.unit] += d - std::min(d, f.child_ns);
    if (!t.frames.empty()) t.frames.back().child_ns += d;
    auto it = p.bps.find(f.ret_addr);
    if (it != p.bps.end() && it->second.return_refs > 0 && --it->second.return_refs == 0 &&
        f.ret_addr != keep)
      drop_if_unused(p, f.ret_addr);
  }
}

}  // namespace callmon::monitor
