// Frames open at the attach, pushed and written as INHERIT records by their own thread
// (see attach_inherit.hpp).
#include "runtime/patching/attach_inherit.hpp"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "callmon/attach_inherit_abi.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/patching/attach_dlopen.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/selection/filter_select.hpp"

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

uint64_t g_start_ticks = 0;  // the attach's (attach_inherit_note_start)

// Writes INHERIT records of s's frames from `from` up, outermost first, at `ticks`.
void write_inherited(ThreadState* s, Frame* from, uint64_t ticks) {
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

// The detach, for a thread that made no call while attached (it has no file): a file of
// its own, written by the detaching thread, with its frames open at the attach as INHERIT
// records at the attach's time and END now, so that they are shown (open the whole time).
// A state and shadow stack made here for it, and unmapped. Only system calls (open, mmap):
// no lock, the other threads being stopped. With name filters, each frame's selection is
// the filter table's (function_selected without a rescan: a lookup in the table the
// prestop's module scan left, no request to callmon's selection service, which is busy
// detaching); a thread none of whose frames is selected gets no file, as it would get no
// record. Not in monitor mode.
void write_untaken(const abi::Table& t, const abi::Thread& th) {
  if (th.count == 0 || monitor_mode()) return;
  uint8_t* selected = nullptr;
  if (filter_on()) {
    void* m = mmap(nullptr, th.count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    selected = static_cast<uint8_t*>(m);
    bool any = false;
    for (uint32_t i = 0; i < th.count; ++i)
      any |= (selected[i] = function_selected(t.frames[th.first + i].fn, false) ? 1 : 0) != 0;
    if (!any) {
      munmap(selected, th.count);
      return;
    }
  }
  void* mem = mmap(nullptr, sizeof(ThreadState), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  const size_t stack_bytes = th.count * sizeof(Frame);
  void* stack = mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  auto* s = static_cast<ThreadState*>(mem);
  if (stack != MAP_FAILED && thread_open_for(s, th.tid)) {
    s->stack_base = s->top = static_cast<Frame*>(stack);
    s->stack_bytes = stack_bytes;
    s->stack_limit = s->stack_base + th.count;
    s->selected = selected;  // null without name filters: every frame recorded
    const uint64_t start = g_start_ticks ? g_start_ticks : read_ticks();
    s->header->start_ticks = start;
    s->calib_last = start;
    for (uint32_t i = 0; i < th.count; ++i) {
      const abi::Frame& a = t.frames[th.first + i];
      push_frame(s, a.fn, a.sp, 0);  // its slot, if hijacked, is put back by the caller
    }
    write_inherited(s, s->stack_base, start);
    thread_finish(s, true);
    // thread_finish named it after the calling thread.
    char path[64];
    LineBuf p(path, sizeof path);
    p.str("/proc/self/task/").dec(static_cast<uint64_t>(th.tid)).str("/comm");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char name[sizeof s->header->thread_name] = {};
      ssize_t n = read(fd, name, sizeof name - 1);
      close(fd);
      if (n > 0 && name[n - 1] == '\n') name[n - 1] = 0;
      if (n > 0) memcpy(s->header->thread_name, name, sizeof name);
    }
    if (s->chunk_base) munmap(s->chunk_base, s->chunk_size);
    munmap(s->header, format::kHeaderSize);
  }
  if (stack != MAP_FAILED) munmap(stack, stack_bytes);
  if (selected) munmap(selected, th.count);
  munmap(mem, sizeof(ThreadState));
}

}  // namespace

void attach_inherit_note_start() { g_start_ticks = read_ticks(); }

void attach_inherit_take(ThreadState* s) {
  abi::Table& t = callmon_attach_inherit;
  if (!s->header) return;  // monitor mode, or no file
  // The tool wrote this session's table: its stop is over, the meta lines can say what it
  // wrote (attach_meta.hpp).
  if (attach_session() != 0 && __atomic_load_n(&t.session, __ATOMIC_ACQUIRE) == attach_session())
    attach_dl_release_meta();
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
  write_inherited(s, from, read_ticks());
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
    write_untaken(t, th);
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
