// sigaction, signal, bsd_signal, sysv_signal: the program's handlers run inside a wrapper
// that keeps the thread's stack of running handlers (signal_contexts.hpp).
//
// Why: a handler may interrupt one of callmon's hooks at any instruction, and its own hooks
// then see the hook's busy count on ThreadState::guard and write nested records
// (docs/runtime.md, "Signals"). A handler that leaves by siglongjmp never lets the
// interrupted hook finish: without the wrapper the busy count stayed, and every later hook
// of the thread wrote nested records until their margin was gone, then lost them all.
//
// The program sees nothing of it: the kernel holds the wrapper (always SA_SIGINFO, the
// program's mask and other flags unchanged), the old action sigaction returns names the
// program's handler and its SA_SIGINFO. Handlers installed before the runtime came
// (`record -p`) are wrapped at the attach, those a module's constructors install while
// attached at the pass that finds the module, and all given back at the detach; those
// installed through glibc's internal calls (siginterrupt, sigset) are not wrapped (while
// attached: until the next pass that finds a new module).
#include <dlfcn.h>
#include <signal.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <cstdint>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/signal_contexts.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/recording/thread_state.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// One running handler of the thread.
struct SignalContext {
  uintptr_t frame;           // the ucontext's address: the kernel's signal frame, right
                             // above the handler's own frames; 0 while being filled
  uintptr_t interrupted_sp;  // the interrupted code's stack pointer
  uint64_t depth;            // shadow-stack frames open (published) when it started
  uint32_t busy;             // the guard's busy count when it started: what its own code
                             // runs with outside hooks
  bool on_alt;               // runs on the alternate signal stack
  bool resync;               // the interrupted hook had committed a record and not yet
                             // updated the encoding state after it
  uint32_t pending_enter;    // what the interrupted depth-0 hook still owed the trace
  uint32_t pending_exits;    // (ThreadState::pending_enter, pending_exits); 0: nothing
};

// Deeper nesting than this is not followed (its handlers are left as before the fix).
constexpr uint32_t kMaxContexts = 32;

__thread SignalContext t_contexts[kMaxContexts];
__thread uint32_t t_context_count;

// Where handlers that interrupted a hook and returned wrote their first nested record: its
// 8 PAD bytes are where the hook's speculative store lands if the hook loaded the cursor
// before the handler ran and stores after it (event_writer.hpp); the hook puts the PAD
// back after its `xadd`. If another handler abandons it in between, the PAD stays
// overwritten with its record and zero bytes, and the reader's chunk ended there: the
// jump puts the PAD back (signal_contexts_leave). The last few, per thread.
struct PadSite {
  uint8_t* at;
  // The chunk it was in (ThreadState::chunk_serial): nothing is repaired in another, even
  // one mapped at the same address. With the address only, a site of the first attach's
  // last chunk was "repaired" in the second attach's first chunk, mapped where that one had
  // been: 8 PAD bytes over records in the middle of the chunk (attach.sigjmp.clang.cyg in CI).
  uint64_t chunk_serial;
};
constexpr uint32_t kPadSites = 8;
__thread PadSite t_pad_sites[kPadSites];
__thread uint32_t t_pad_next;

void repair_pad_sites(ThreadState* s) {
  uint8_t* end = s->limit + kNestedMargin;
  if (s->cur < end) end = s->cur;
  for (const PadSite& p : t_pad_sites)
    if (p.at && p.chunk_serial == s->chunk_serial && p.at >= s->chunk_base &&
        p.at + kNestedPad <= end)
      memset(p.at, callmon::format::kPadByte, kNestedPad);
}

// The program's handler per signal, and its sa_flags.
struct ProgramHandler {
  void* handler;
  int flags;
};
ProgramHandler g_handlers[_NSIG];

ProgramHandler program_handler(int sig) {
  return {__atomic_load_n(&g_handlers[sig].handler, __ATOMIC_RELAXED),
          __atomic_load_n(&g_handlers[sig].flags, __ATOMIC_RELAXED)};
}

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
SigactionFn g_real_sigaction;

// Serialises the sigaction interposer with signal_handlers_wrap_running, the one wrap made
// with the program's other threads running (a pass while attached): without it the wrap
// could read the kernel's action, an interposed install put a new handler in the table
// and the kernel, and the wrap then put back the handler it had read (the program's latest
// install lost). Signals are blocked while it is held (SignalBlock first), so a handler
// that calls sigaction never waits for the code it interrupted. The word holds the pid of
// the process whose thread holds it: a child forked while another thread held it sees
// another pid there and takes it (that thread is not in the child), so no pthread_atfork
// is needed. A vfork child (another pid, the parent's memory) never takes it: its
// sigaction leaves the table alone.
int g_install_owner = 0;

class InstallLock {
 public:
  InstallLock() {
    const int self = static_cast<int>(syscall(SYS_getpid));
    for (;;) {
      int held = 0;
      if (__atomic_compare_exchange_n(&g_install_owner, &held, self, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED))
        return;
      if (held != self &&  // the process it was forked from held it
          __atomic_compare_exchange_n(&g_install_owner, &held, self, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED))
        return;
      sched_yield();
    }
  }
  ~InstallLock() { __atomic_store_n(&g_install_owner, 0, __ATOMIC_RELEASE); }
  InstallLock(const InstallLock&) = delete;
  InstallLock& operator=(const InstallLock&) = delete;

 private:
  SignalBlock block_;  // constructed first, released last
};

// Resolved at the first call, not in a constructor: a dlsym that early changed how the
// recorder's work after a later dlopen was split into PAUSE records (e2e.dlopen.*.patch).
void resolve_sigaction() {
  if (__atomic_load_n(&g_real_sigaction, __ATOMIC_ACQUIRE)) return;
  RuntimeScope rs;  // dlsym may allocate with the program's malloc
  void* f = dlsym(RTLD_NEXT, "sigaction");
  __atomic_store_n(&g_real_sigaction, reinterpret_cast<SigactionFn>(f), __ATOMIC_RELEASE);
}

// The code marks of event_writer.hpp (CALLMON_CODE_MARK): the address after each record
// commit, and each place where the encoding state is up to date again. Sorted once.
extern "C" uintptr_t __start_callmon_commits[] __attribute__((weak, visibility("hidden")));
extern "C" uintptr_t __stop_callmon_commits[] __attribute__((weak, visibility("hidden")));
extern "C" uintptr_t __start_callmon_synced[] __attribute__((weak, visibility("hidden")));
extern "C" uintptr_t __stop_callmon_synced[] __attribute__((weak, visibility("hidden")));

// A commit and the update after it lie this close together (a few stores and a branch).
constexpr uintptr_t kCommitWindowBytes = 256;

// Whether the interrupted code at `pc` lies between a record's commit and the encoding
// state's update after it: the last commit mark at or before `pc` comes after the last
// synced mark before `pc`, and a synced mark follows `pc` closely.
bool in_commit_window(uintptr_t pc) {
  const uintptr_t* c0 = __start_callmon_commits;
  const uintptr_t* c = std::upper_bound(c0, static_cast<const uintptr_t*>(__stop_callmon_commits), pc);
  if (c == c0) return false;
  uintptr_t commit = c[-1];
  const uintptr_t* s0 = __start_callmon_synced;
  const uintptr_t* s1 = __stop_callmon_synced;
  const uintptr_t* d = std::upper_bound(s0, s1, pc);
  if (d == s1 || *d - commit > kCommitWindowBytes) return false;
  return d == s0 || d[-1] < commit;
}

__attribute__((constructor)) void signal_interposer_init() {
  if (__start_callmon_commits) std::sort(__start_callmon_commits, __stop_callmon_commits);
  if (__start_callmon_synced) std::sort(__start_callmon_synced, __stop_callmon_synced);
}

// Whether the calling code runs on the thread's alternate signal stack: a system call of
// our own (the program may interpose and instrument sigaltstack).
bool on_alt_stack() {
  stack_t ss;
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "0"(131L /* SYS_sigaltstack */), "D"(0L), "S"(&ss)
               : "rcx", "r11", "memory");
  return ret == 0 && (ss.ss_flags & SS_ONSTACK);
}

// Every handler the program installs runs here.
void signal_wrapper(int sig, siginfo_t* info, void* uc) {
  uintptr_t frame = reinterpret_cast<uintptr_t>(uc);
  bool alt = on_alt_stack();
  uint32_t i = t_context_count;
  // Contexts a handler left without our seeing it (setcontext, a jump from code the
  // interposers do not reach): on the same stack, a live handler's signal frame lies above
  // any signal delivered inside it.
  while (i > 0 && t_contexts[i - 1].frame != 0 && t_contexts[i - 1].on_alt == alt &&
         t_contexts[i - 1].frame <= frame)
    --i;
  bool tracked = i < kMaxContexts;
  ThreadState* st = t_state;
  uint8_t* entry_cur = st ? st->cur : nullptr;
  uint64_t entry_chunk = st ? st->chunk_serial : 0;
  bool in_hook = st && (st->guard & kGuardBusyMask) > (i > 0 ? t_contexts[i - 1].busy : 0);
  if (tracked) {
    // Reserved before it is filled (as push_frame does): a signal arriving meanwhile takes
    // the next slot, and one that leaves by longjmp stops at a slot still being filled.
    SignalContext* c = &t_contexts[i];
    c->frame = 0;
    signal_fence();
    t_context_count = i + 1;
    signal_fence();
    ThreadState* s = st;
    const mcontext_t& m = static_cast<ucontext_t*>(uc)->uc_mcontext;
    c->interrupted_sp = static_cast<uintptr_t>(m.gregs[REG_RSP]);
    c->busy = s ? (s->guard & kGuardBusyMask) : 0;
    // A hook was interrupted (the busy count is above what the interrupted code runs with).
    uint32_t base = i > 0 ? t_contexts[i - 1].busy : 0;
    // A slow path's record committed and the state not updated: its flag (depth-0 hooks
    // only, as the pending counts below); a fast path's: the code marks.
    c->resync = c->busy > base &&
                ((base == 0 && s && s->unsynced) ||
                 in_commit_window(static_cast<uintptr_t>(m.gregs[REG_RIP])));
    c->depth = s ? static_cast<uint64_t>(s->top - s->stack_base) : 0;
    // Only depth-0 hooks set them; under a handler that interrupted a hook they may be
    // that hook's, not the one this signal interrupted.
    bool depth0_hook = s && c->busy > base && base == 0;
    c->pending_enter = depth0_hook ? s->pending_enter : 0;
    c->pending_exits = depth0_hook ? s->pending_exits : 0;
    c->on_alt = alt;
    signal_fence();
    c->frame = frame;
    signal_fence();
  }
  ProgramHandler h = program_handler(sig);
  if (h.handler != reinterpret_cast<void*>(SIG_DFL) && h.handler != reinterpret_cast<void*>(SIG_IGN)) {
    if (h.flags & SA_SIGINFO)
      reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h.handler)(sig, info, uc);
    else
      reinterpret_cast<void (*)(int)>(h.handler)(sig);
  }
  signal_fence();
  if (in_hook && st->cur != entry_cur && st->chunk_serial == entry_chunk) {
    uint32_t k = t_pad_next;
    t_pad_next = k + 1;
    t_pad_sites[k % kPadSites] = {entry_cur, entry_chunk};
  }
  if (tracked) t_context_count = i;  // returned normally: what it interrupted goes on
}

// Closes what the jump abandons of the thread's recording state: the left handlers' frames
// (all opened after `out` began, whatever stack they are on), a frame the interrupted hook
// had published but not filled, and the interrupted context's frames deeper than the target.
void close_abandoned(ThreadState* s, const SignalContext& out, uintptr_t target) {
  bool nested = guard_enter(s);
  Frame* lo = s->stack_base + out.depth;
  if (lo < s->top) {
    uint64_t count = frames_recorded(s, lo, s->top);
    pop_frames(s, lo);
    if (count) put_unwind(s, nested, read_ticks(), count, callmon::format::UnwindReason::kLongjmp);
  }
  // push_frame writes `sp` last: an entry hook stopped before that never wrote its ENTER.
  if (s->top > s->stack_base && s->top[-1].sp == 0) pop_frames(s, s->top - 1);
  // The interrupted hook owed records it was writing in a slow path: the handler ran when
  // that path's chunk switch (or the -pg exit's rescan) gave the signal mask back. An
  // ENTER never written: its frame,
  // the innermost when the handler started, goes without a record (counted in the UNWIND
  // below, it made the recording close the function that holds the jump's target too, and
  // every later call nested one level too high). EXITs never written: their frames are off
  // the shadow stack already and stayed open in the recording (every later call nested too
  // deep; a -pg exit of a tail call pops two frames).
  if (out.pending_enter && out.depth > 0 && !(s->guard & kGuardOverflow) &&
      s->top == s->stack_base + out.depth)
    pop_frames(s, s->top - 1);
  if (out.pending_exits)
    put_unwind(s, nested, read_ticks(), out.pending_exits,
               callmon::format::UnwindReason::kLongjmp);
  guard_leave(s);
  if (target > out.interrupted_sp && target - out.interrupted_sp < (uintptr_t{1} << 30))
    unwind_below(target - 16, callmon::format::UnwindReason::kLongjmp);
}

bool wraps(const struct sigaction* act) {
  return act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

}  // namespace

namespace callmon::rt {

void signal_contexts_leave(uintptr_t target) {
  uint32_t n = t_context_count;
  if (n == 0) return;
  uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  // A handler's frames lie between its signal frame and the stack pointer of its code where
  // the next handler interrupted it (the innermost one's: here).
  uint32_t k = n;
  uintptr_t low = here;
  while (k > 0 && t_contexts[k - 1].frame != 0 &&
         !(target >= low && target < t_contexts[k - 1].frame)) {
    low = t_contexts[k - 1].interrupted_sp;
    --k;
  }
  if (k == n) return;
  SignalBlock block;
  const SignalContext& out = t_contexts[k];
  // The target's context runs with the busy count its handler started with (none: 0).
  uint32_t base = k > 0 ? t_contexts[k - 1].busy : 0;
  bool resync = false;
  for (uint32_t j = k; j < n; ++j) resync |= t_contexts[j].resync;
  ThreadState* s = t_state;
  if (s) {
    s->guard = (s->guard & ~kGuardBusyMask) | base;
    if (base == 0)  // the abandoned hook's
      s->pending_enter = s->pending_exits = s->unsynced = s->padding = 0;
    repair_pad_sites(s);
    if (!(s->guard & (kGuardStopped | kGuardMonitor)) && !in_runtime()) {
      // The reader has taken the abandoned record into its encoding state and the writer
      // has not: both start afresh in a new chunk (not under a hook still interrupted).
      if (resync && base == 0 && s->header) restart_chunk(s);
      if (!(s->guard & kGuardStopped)) close_abandoned(s, out, target);
    }
  }
  t_context_count = k;
}

void signal_contexts_exit() {
  uint32_t n = t_context_count;
  ThreadState* s = t_state;
  if (n == 0 || !s) return;
  SignalBlock block;
  bool resync = false;
  for (uint32_t j = 0; j < n; ++j) {
    resync |= t_contexts[j].resync;
    // What a handler's code runs with from now on, and what a jump back to it restores.
    t_contexts[j].busy = 0;
    t_contexts[j].resync = false;
  }
  if (!(s->guard & kGuardBusyMask)) return;  // no handler interrupted a hook
  // Whatever the handlers interrupted never runs again: the thread is outside any hook.
  s->guard &= ~kGuardBusyMask;
  s->pending_enter = s->pending_exits = s->unsynced = s->padding = 0;
  repair_pad_sites(s);
  if (!(s->guard & (kGuardStopped | kGuardMonitor)) && !in_runtime() && resync && s->header)
    restart_chunk(s);
}

void signal_handlers_prepare() { resolve_sigaction(); }

HandlerStackRef signal_contexts_self() { return {t_contexts, &t_context_count}; }

bool signal_contexts_interrupted_in(HandlerStackRef ref, uintptr_t lo, uintptr_t hi) {
  if (!ref.contexts || !ref.count) return false;
  const auto* contexts = static_cast<const SignalContext*>(ref.contexts);
  uint32_t n = __atomic_load_n(ref.count, __ATOMIC_RELAXED);
  if (n > kMaxContexts) n = kMaxContexts;
  const pid_t self = getpid();
  for (uint32_t i = 0; i < n; ++i) {
    uintptr_t frame = __atomic_load_n(&contexts[i].frame, __ATOMIC_RELAXED);
    if (!frame) continue;  // being filled: its wrapper is running (the tool sees that pc)
    uint64_t pc = 0;
    iovec mine{&pc, sizeof pc};
    iovec there{reinterpret_cast<void*>(frame + offsetof(ucontext_t, uc_mcontext.gregs) +
                                        REG_RIP * sizeof(greg_t)),
                sizeof pc};
    if (process_vm_readv(self, &mine, 1, &there, 1, 0) != sizeof pc) continue;
    if (pc >= lo && pc < hi) return true;
  }
  return false;
}

void signal_handlers_wrap() {
  resolve_sigaction();  // done already (signal_handlers_prepare): no dlsym here
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33) continue;  // 32, 33: glibc's
    struct sigaction cur;
    if (g_real_sigaction(sig, nullptr, &cur) != 0 || !wraps(&cur) ||
        cur.sa_sigaction == &signal_wrapper)
      continue;
    // The table first: the signal may arrive as soon as the kernel has the wrapper.
    __atomic_store_n(&g_handlers[sig].flags, cur.sa_flags, __ATOMIC_RELAXED);
    __atomic_store_n(&g_handlers[sig].handler, reinterpret_cast<void*>(cur.sa_sigaction),
                     __ATOMIC_RELEASE);
    struct sigaction w = cur;
    w.sa_sigaction = &signal_wrapper;
    w.sa_flags |= SA_SIGINFO;
    g_real_sigaction(sig, &w, nullptr);
  }
}

namespace {

// Whether two actions are the same install (the restorer glibc adds aside).
bool same_action(const struct sigaction& a, const struct sigaction& b) {
  constexpr int kRestorer = 0x04000000;  // SA_RESTORER, set by glibc on every install
  return a.sa_sigaction == b.sa_sigaction &&
         (a.sa_flags & ~kRestorer) == (b.sa_flags & ~kRestorer) &&
         memcmp(&a.sa_mask, &b.sa_mask, sizeof a.sa_mask) == 0;
}

}  // namespace

void signal_handlers_wrap_running() {
  resolve_sigaction();
  if (!g_real_sigaction) return;
  InstallLock lock;  // no interposed install between our read and our write
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33) continue;  // 32, 33: glibc's
    struct sigaction cur;
    if (g_real_sigaction(sig, nullptr, &cur) != 0) continue;
    // An install through libc itself (a module whose GOT word is not redirected yet) can
    // still come between the read and the write: the write's old action tells, and that
    // newer handler is wrapped in its turn (a few times at most).
    for (int tries = 0; tries < 4 && wraps(&cur) && cur.sa_sigaction != &signal_wrapper;
         ++tries) {
      // The table first: the signal may arrive as soon as the kernel has the wrapper.
      __atomic_store_n(&g_handlers[sig].flags, cur.sa_flags, __ATOMIC_RELAXED);
      __atomic_store_n(&g_handlers[sig].handler, reinterpret_cast<void*>(cur.sa_sigaction),
                       __ATOMIC_RELEASE);
      struct sigaction w = cur, was;
      w.sa_sigaction = &signal_wrapper;
      w.sa_flags |= SA_SIGINFO;
      if (g_real_sigaction(sig, &w, &was) != 0 || same_action(was, cur)) break;
      if (!wraps(&was)) {  // SIG_DFL or SIG_IGN came in between: theirs, not ours
        __atomic_store_n(&g_handlers[sig].handler, reinterpret_cast<void*>(was.sa_handler),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&g_handlers[sig].flags, was.sa_flags, __ATOMIC_RELAXED);
        g_real_sigaction(sig, &was, nullptr);
        break;
      }
      cur = was;
    }
  }
}

void signal_handlers_unwrap() {
  if (!g_real_sigaction) return;  // no attach wrapped anything
  for (int sig = 1; sig < _NSIG; ++sig) {
    struct sigaction cur;
    if (g_real_sigaction(sig, nullptr, &cur) != 0 || cur.sa_sigaction != &signal_wrapper)
      continue;
    void* handler = __atomic_load_n(&g_handlers[sig].handler, __ATOMIC_ACQUIRE);
    int flags = __atomic_load_n(&g_handlers[sig].flags, __ATOMIC_RELAXED);
    cur.sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(handler);
    cur.sa_flags = (cur.sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
    g_real_sigaction(sig, &cur, nullptr);
  }
}

}  // namespace callmon::rt

namespace {

// The old action the kernel gave back, as the program installed it: its handler where the
// kernel has the wrapper. `prev`: the table's entry before the call.
void name_program_handler(struct sigaction* old, const ProgramHandler& prev) {
  bool wrapped = prev.handler != nullptr && prev.handler != reinterpret_cast<void*>(SIG_DFL) &&
                 prev.handler != reinterpret_cast<void*>(SIG_IGN);
  if (old->sa_sigaction == &signal_wrapper) {
    old->sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(prev.handler);
    old->sa_flags = (old->sa_flags & ~SA_SIGINFO) | (prev.flags & SA_SIGINFO);
  } else if (wrapped && old->sa_handler == SIG_DFL) {
    // SA_RESETHAND reset the wrapper to SIG_DFL; the kernel kept the flags, with the
    // SA_SIGINFO the wrapper added.
    old->sa_flags = (old->sa_flags & ~SA_SIGINFO) | (prev.flags & SA_SIGINFO);
  }
}

}  // namespace

CALLMON_EXPORT int sigaction(int sig, const struct sigaction* act,
                             struct sigaction* old) noexcept {
  resolve_sigaction();
  if (sig <= 0 || sig >= _NSIG) return g_real_sigaction(sig, act, old);
  if (in_vfork_child()) {
    // A vfork child (or a posix_spawn-like clone) has its own signal actions in the kernel
    // but the parent's memory: the table is the parent's, and a child that resets a
    // handler before exec (gdb, CPython's subprocess: SIG_DFL) left the parent's wrapper
    // calling nothing, its signals swallowed. The child's installs go to the kernel as
    // they are (it records nothing anyway), the table untouched; no lock either (a parent
    // thread may hold it).
    int ret = g_real_sigaction(sig, act, old);
    if (ret == 0 && old) name_program_handler(old, program_handler(sig));
    return ret;
  }
  InstallLock lock;  // the table and the kernel changed together (signal_handlers_wrap_running)
  ProgramHandler prev = program_handler(sig);
  int ret;
  if (wraps(act)) {
    struct sigaction w = *act;  // `act` and `old` may be the same
    w.sa_sigaction = &signal_wrapper;
    w.sa_flags |= SA_SIGINFO;
    // The table first: the signal may arrive as soon as the kernel has the wrapper.
    __atomic_store_n(&g_handlers[sig].flags, act->sa_flags, __ATOMIC_RELAXED);
    __atomic_store_n(&g_handlers[sig].handler, reinterpret_cast<void*>(act->sa_sigaction),
                     __ATOMIC_RELEASE);
    ret = g_real_sigaction(sig, &w, old);
    if (ret != 0) {
      __atomic_store_n(&g_handlers[sig].handler, prev.handler, __ATOMIC_RELAXED);
      __atomic_store_n(&g_handlers[sig].flags, prev.flags, __ATOMIC_RELAXED);
    }
  } else {
    struct sigaction copy;
    if (act) copy = *act;  // `act` and `old` may be the same
    ret = g_real_sigaction(sig, act ? &copy : nullptr, old);
    if (ret == 0 && act) {
      __atomic_store_n(&g_handlers[sig].handler, reinterpret_cast<void*>(copy.sa_handler),
                       __ATOMIC_RELAXED);
      __atomic_store_n(&g_handlers[sig].flags, copy.sa_flags, __ATOMIC_RELAXED);
    }
  }
  if (ret == 0 && old) name_program_handler(old, prev);
  return ret;
}

namespace {

// signal() and its variants as glibc builds them, through the interposed sigaction (glibc's
// own call is internal and would bypass it).
__sighandler_t install(int sig, __sighandler_t handler, int flags, bool mask_self) {
  if (handler == SIG_ERR || sig <= 0 || sig >= _NSIG) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act = {}, old = {};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (mask_self) sigaddset(&act.sa_mask, sig);
  act.sa_flags = flags;
  if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}

}  // namespace

// BSD semantics (glibc's default signal): the signal blocked in its handler, system calls
// restarted. (glibc leaves out SA_RESTART for a signal siginterrupt named; that set is
// glibc's own and not followed here.)
CALLMON_EXPORT __sighandler_t signal(int sig, __sighandler_t handler) noexcept {
  return install(sig, handler, SA_RESTART, true);
}

CALLMON_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler) noexcept {
  return install(sig, handler, SA_RESTART, true);
}

// System V semantics (signal() under strict ISO C or XPG: -std=c11 redirects to it).
CALLMON_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t handler) noexcept {
  return install(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}

CALLMON_EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t handler) noexcept {
  return install(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}
