// Frames open at the attach, pushed and written as INHERIT records by their own thread
// (see attach_inherit.hpp).
#include "runtime/patching/attach_inherit.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "callmon/attach_inherit_abi.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/recording/event_writer.hpp"

namespace abi = callmon::attach_inherit_abi;

extern "C" void callmon_pg_return();  // arch/x86_64/pg_return.S
extern "C" void callmon_patched_return();  // arch/x86_64/patch_entry.S

// Written by the tool through /proc/PID/mem while every thread is stopped (it finds it by
// name in the runtime's symbol table); read by each thread once, after.
extern "C" __attribute__((visibility("default"))) abi::Table callmon_attach_inherit;
abi::Table callmon_attach_inherit = {reinterpret_cast<uint64_t>(&callmon_pg_return), 0, 0, {}, {},
                                     reinterpret_cast<uint64_t>(&callmon_patched_return)};

namespace callmon::rt {

namespace {

// The calling thread's entry of this session's table not yet taken, or nullptr.
abi::Thread* pending(pid_t tid) {
  abi::Table& t = callmon_attach_inherit;
  const unsigned session = attach_session();
  if (session == 0 || t.session != session) return nullptr;
  const uint32_t n = t.threads < abi::kMaxThreads ? t.threads : abi::kMaxThreads;
  for (uint32_t i = 0; i < n; ++i)
    if (t.thread[i].tid == tid)
      return __atomic_load_n(&t.thread[i].taken, __ATOMIC_ACQUIRE) ? nullptr : &t.thread[i];
  return nullptr;
}

}  // namespace

void attach_inherit_take(ThreadState* s) {
  abi::Table& t = callmon_attach_inherit;
  if (!s->header) return;  // monitor mode, or no file
  abi::Thread* mine = pending(s->tid);
  // Once: a signal handler's hook may come here again from inside this one.
  if (!mine || __atomic_exchange_n(&mine->taken, 1u, __ATOMIC_ACQ_REL)) return;
  // attach_revive's caller holds no signal block here: a handler's hook must not push
  // between these frames.
  SignalBlock block;
  if (mine->first >= abi::kMaxFrames || mine->count > abi::kMaxFrames - mine->first) return;
  Frame* from = s->top;
  for (uint32_t i = 0; i < mine->count && s->top < s->stack_limit; ++i) {
    const abi::Frame& a = t.frames[mine->first + i];
    Frame* f = push_frame(s, a.fn, a.sp, a.ret);
    note_selection(s, f, false);
  }
  // Outermost first, as a fork child's (thread_after_fork_child).
  const uint64_t ticks = read_ticks();
  uint64_t fields[1 + kInheritBatch];
  for (Frame* f = from; f < s->top;) {
    unsigned k = 0;
    for (; f < s->top && k < kInheritBatch; ++f)
      if (frame_recorded(s, f)) fields[1 + k++] = f->fn;
    if (k == 0) continue;
    fields[0] = k;
    write_special(s, false, format::kCodeInherit, ticks, fields, k + 1);
  }
}

ThreadState* attach_inherit_claim(ThreadState* s) {
  if (attach_session() == 0) return s;  // every process not attached to
  if (s && !(s->guard & kGuardStopped)) return s;
  if (!pending(static_cast<pid_t>(syscall(SYS_gettid)))) return s;
  if (!s) return thread_setup();
  attach_revive(s);
  return s;
}

uintptr_t attach_inherit_return(uintptr_t sp) {
  abi::Table& t = callmon_attach_inherit;
  const unsigned session = attach_session();
  if (session == 0 || t.session != session) return 0;
  const uint32_t n = t.threads < abi::kMaxThreads ? t.threads : abi::kMaxThreads;
  for (uint32_t i = 0; i < n; ++i) {
    const abi::Thread& th = t.thread[i];
    if (th.first >= abi::kMaxFrames || th.count > abi::kMaxFrames - th.first) continue;
    for (uint32_t k = 0; k < th.count; ++k)
      if (t.frames[th.first + k].sp == sp && t.frames[th.first + k].ret)
        return t.frames[th.first + k].ret;
  }
  return 0;
}

void attach_inherit_restore_untaken() {
  abi::Table& t = callmon_attach_inherit;
  const unsigned session = attach_session();
  if (session == 0 || t.session != session) return;
  const pid_t pid = getpid();
  const uint32_t n = t.threads < abi::kMaxThreads ? t.threads : abi::kMaxThreads;
  for (uint32_t i = 0; i < n; ++i) {
    abi::Thread& th = t.thread[i];
    if (__atomic_load_n(&th.taken, __ATOMIC_ACQUIRE)) continue;
    // A thread gone meanwhile: its stack may be another thread's now.
    if (syscall(SYS_tgkill, pid, th.tid, 0) != 0) continue;
    if (th.first >= abi::kMaxFrames || th.count > abi::kMaxFrames - th.first) continue;
    // Oldest first, only slots still holding the trampoline (as restore_returns).
    for (uint32_t k = 0; k < th.count; ++k) {
      const abi::Frame& f = t.frames[th.first + k];
      if (!f.ret) continue;
      auto* slot = reinterpret_cast<uint64_t*>(f.sp + 16);
      if (*slot == t.trampoline || *slot == t.patched_trampoline) *slot = f.ret;
    }
    th.taken = 1;
  }
}

}  // namespace callmon::rt
