// syscall() and prctl(): what a program asks of the kernel through libc's generic entries
// that changes what the runtime may do.
//
// Seccomp, by prctl(PR_SET_SECCOMP) or syscall(SYS_seccomp): a program entering a sandbox
// (sshd's privilege-separated child, libseccomp users, systemd-style service filters,
// browsers' renderers). Its filter may kill the process, or raise a SIGSYS that the
// runtime's blocked signals turn into a kill, at the first system call the program did not
// need itself: the runtime's next file window, thread set-up or module line. The
// interposers call recording_seal (process.hpp) before the filter goes in, so the runtime
// makes no system call of its own from then on; the call itself is passed on unchanged.
//
// A fork made by syscall(SYS_fork), or syscall(SYS_clone) or syscall(SYS_clone3) without
// CLONE_VM and without a new stack (container runtimes, sandboxes' zygotes, test frameworks): glibc runs no
// pthread_atfork handler for it, so the child went on writing through its parent's thread
// state into the parent's file (half the calls lost, no second process). The child runs the
// runtime's fork handlers itself (raw_fork_child), the parent writes its FORK record.
//
// Both forward through the `syscall` instruction rather than the next definition: syscall()
// is async-signal-safe, called from handlers before anything could be looked up, and the
// runtime's own calls of prctl and syscall come here too. What a program does with the
// instruction itself (Chrome's sandbox, Go's runtime) is not seen: docs/runtime.md,
// "Sandboxes" and "Processes".
#include <errno.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "runtime/interposers/interpose.hpp"
#include "runtime/recording/process.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

long raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long ret;
  register long r10 asm("r10") = a4;
  register long r8 asm("r8") = a5;
  register long r9 asm("r9") = a6;
  asm volatile("syscall"
               : "=a"(ret)
               : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  if (ret < 0 && ret > -4096) {
    errno = static_cast<int>(-ret);
    return -1;
  }
  return ret;
}

// Whether a request to enter seccomp mode `mode` (SECCOMP_MODE_STRICT or _FILTER; -1 for
// anything else) with `flags` and, for a filter, program `prog`, can install anything. A
// feature probe passes no program (Chromium's, rr's, libseccomp's: EFAULT) or flags strict
// mode does not take (EINVAL): the kernel refuses it, and sealing for it lost the rest of
// the recording.
bool installs(bool strict, long mode, long flags, long prog) {
  if (strict) return mode == SECCOMP_MODE_STRICT && flags == 0;
  return mode == SECCOMP_MODE_FILTER && prog != 0;
}

// The seccomp request `nr(a1..a6)`, behind recording_seal when it `may_install`. Not in a
// vfork child: the seal is the parent's memory, and the filter the child's. A request the
// kernel refused installed nothing (a failed TSYNC neither): the recording goes on.
long sealed_call(bool strict, bool may_install, long nr, long a1, long a2, long a3, long a4,
                 long a5, long a6) {
  const bool seal = may_install && !in_vfork_child();
  if (seal) recording_seal(strict);
  const long r = raw_syscall(nr, a1, a2, a3, a4, a5, a6);
  // With SECCOMP_FILTER_FLAG_TSYNC a thread that could not be synchronised is returned as
  // a positive id, and nothing was installed.
  const bool tsync_failed =
      nr == SYS_seccomp && (a2 & SECCOMP_FILTER_FLAG_TSYNC) && r > 0;
  if (seal && (r < 0 || tsync_failed)) {
    const int why = errno;
    recording_unseal(why);
    errno = why;
  }
  return r;
}

// Whether syscall(number, a1, a2, ...) is a fork: a new process (no CLONE_VM, no
// CLONE_THREAD) that goes on from here on a copy of this stack (no new stack).
bool forklike(long number, long a1, long a2) {
  if (number == SYS_fork) return true;
  if (number == SYS_clone) return !(a1 & (CLONE_VM | CLONE_THREAD)) && a2 == 0;
  if (number != SYS_clone3 || !a1 || static_cast<size_t>(a2) < sizeof(clone_args)) return false;
  const auto* args = reinterpret_cast<const clone_args*>(a1);
  return !(args->flags & (CLONE_VM | CLONE_THREAD)) && args->stack == 0;
}

}  // namespace

CALLMON_EXPORT int prctl(int option, ...) noexcept {
  va_list ap;
  va_start(ap, option);
  long a2 = va_arg(ap, long), a3 = va_arg(ap, long), a4 = va_arg(ap, long),
       a5 = va_arg(ap, long);
  va_end(ap);
  if (option == PR_SET_SECCOMP)
    return static_cast<int>(
        sealed_call(a2 == SECCOMP_MODE_STRICT, installs(a2 == SECCOMP_MODE_STRICT, a2, 0, a3),
                    SYS_prctl, option, a2, a3, a4, a5, 0));
  return static_cast<int>(raw_syscall(SYS_prctl, option, a2, a3, a4, a5, 0));
}

CALLMON_EXPORT long syscall(long number, ...) noexcept {
  va_list ap;
  va_start(ap, number);
  long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long),
       a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
  va_end(ap);
  if (forklike(number, a1, a2) && !in_vfork_child()) {
    const long child = raw_syscall(number, a1, a2, a3, a4, a5, a6);
    const int why = errno;
    if (child == 0) raw_fork_child();
    else if (child > 0) note_fork_parent(static_cast<pid_t>(child));
    errno = why;
    return child;
  }
  if (number == SYS_seccomp)
    return sealed_call(a1 == SECCOMP_SET_MODE_STRICT,
                       installs(a1 == SECCOMP_SET_MODE_STRICT, a1 == SECCOMP_SET_MODE_FILTER
                                    ? SECCOMP_MODE_FILTER : (a1 == SECCOMP_SET_MODE_STRICT
                                    ? SECCOMP_MODE_STRICT : -1), a2, a3),
                       number, a1, a2, a3, a4, a5, a6);
  if (number == SYS_prctl && a1 == PR_SET_SECCOMP)
    return sealed_call(a2 == SECCOMP_MODE_STRICT, installs(a2 == SECCOMP_MODE_STRICT, a2, 0, a3),
                       number, a1, a2, a3, a4, a5, a6);
  return raw_syscall(number, a1, a2, a3, a4, a5, a6);
}
