// RemoteCall: a function call injected into a stopped thread (see remote_call.hpp).
#include "attach/remote_call.hpp"

#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

namespace callmon::attach {
namespace {

constexpr uint64_t kRedZone = 128;
constexpr uint64_t kGap = 512;  // left untouched below the stack pointer, red zone included

}  // namespace

RemoteCall::RemoteCall(ThreadGroup& group, pid_t tid) : group_(group), tid_(tid) {
  if (!group_.get_regs(tid_, &regs_)) return;
  xstate_.resize(1 << 16);
  iovec iov{xstate_.data(), xstate_.size()};
  if (ptrace(PTRACE_GETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0) {
    // No XSAVE: the x87/SSE state alone.
    xstate_.resize(sizeof(user_fpregs_struct));
    if (ptrace(PTRACE_GETFPREGS, tid_, nullptr, xstate_.data()) != 0) return;
  } else {
    xstate_.resize(iov.iov_len);
  }
  scratch_ = regs_.rsp - kGap;
  saved_ = true;
  static_assert(kGap > kRedZone);
}

RemoteCall::~RemoteCall() { restore(); }

void RemoteCall::restore() {
  if (!saved_) return;
  group_.set_regs(tid_, regs_);
  if (xstate_.size() == sizeof(user_fpregs_struct)) {
    ptrace(PTRACE_SETFPREGS, tid_, nullptr, xstate_.data());
  } else {
    iovec iov{xstate_.data(), xstate_.size()};
    ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov);
  }
}

uint64_t RemoteCall::put_string(const std::string& s) {
  uint64_t at = (scratch_ - s.size() - 1) & ~uint64_t{15};
  if (!group_.mem().write(at, s.c_str(), s.size() + 1)) return 0;
  scratch_ = at;
  return at;
}

Result<uint64_t> RemoteCall::call(uint64_t fn, const std::vector<uint64_t>& args, int timeout_ms) {
  if (!saved_) return Error{"cannot read the registers of thread " + std::to_string(tid_)};
  user_regs_struct r = regs_;
  // As just after a `call`: rsp + 8 16-byte aligned, the return address 0 on top.
  uint64_t sp = ((scratch_ - 64) & ~uint64_t{15}) - 8;
  const uint64_t zero = 0;
  if (!group_.mem().write(sp, &zero, sizeof zero))
    return Error{"cannot write to the stack of thread " + std::to_string(tid_)};
  r.rsp = sp;
  r.rip = fn;
  r.rax = 0;
  r.orig_rax = static_cast<unsigned long long>(-1);  // no system call restart for this run
  unsigned long long* slots[6] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
  for (size_t i = 0; i < args.size() && i < 6; ++i) *slots[i] = args[i];
  if (!group_.set_regs(tid_, r)) return Error{"cannot set the registers of thread " + std::to_string(tid_)};
  int status = group_.run_until_stop(tid_, timeout_ms);
  if (status == -1) {
    saved_ = false;
    return Error{"the program exited during the attach"};
  }
  if (status == -2) {
    // Stopped where it is, so that restore() can take it back: left running, it would
    // return to address 0 once callmon is gone.
    group_.stop(tid_);
    return Error{"the injected call did not return within " + std::to_string(timeout_ms / 1000) +
                 " s; the program may now be stuck in it"};
  }
  user_regs_struct out{};
  group_.get_regs(tid_, &out);
  if (WSTOPSIG(status) != SIGSEGV || out.rip != 0)
    return Error{"the injected call stopped at an unexpected place (signal " +
                 std::to_string(WSTOPSIG(status)) + ")"};
  return static_cast<uint64_t>(out.rax);
}

}  // namespace callmon::attach
