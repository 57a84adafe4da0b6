// The recording threads' states across attach sessions (see attach_threads.hpp).
#include "runtime/patching/attach_threads.hpp"

#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/core/sys.hpp"
#include "runtime/interposers/signal_contexts.hpp"
#include "runtime/patching/attach_inherit.hpp"
#include "runtime/recording/context_stash.hpp"
#include "runtime/recording/thread_state.hpp"

extern "C" void callmon_pg_return();  // arch/x86_64/pg_return.S
extern "C" void callmon_patched_return();  // patch_entry.S: the exit once --patch patched

namespace callmon::rt {

namespace {

// Fixed size, no allocation: thread_setup registers from any thread, the detach reads the
// table from one thread while the others are stopped.
struct Entry {
  ThreadState* state;
  unsigned session;  // the session whose file the state writes (0: not an attach's)
  HandlerStackRef handlers;  // its thread's running signal handlers (signal_contexts.hpp)
};
constexpr unsigned kMaxThreads = 16384;
Entry g_threads[kMaxThreads];
unsigned g_session = 0;
bool g_ever = false;  // any attach in this process: else nothing is in the table

Entry* find(ThreadState* s) {
  for (Entry& e : g_threads)
    if (__atomic_load_n(&e.state, __ATOMIC_ACQUIRE) == s) return &e;
  return nullptr;
}

// Puts back the real return address of every call whose return was redirected to the exit
// trampoline (-pg modes, sleds) and empties the shadow stack: after the detach no stack
// holds an address in the runtime, so an exception or a stack walk after it meets only the
// program's own frames. Oldest first, and only slots still holding the trampoline: where
// tail calls share a slot the oldest frame's address is the real one (pg_restore_returns).
// The calls stay open in the file, which END closes.
void restore_returns(ThreadState* s) {
  const auto tramp = reinterpret_cast<uintptr_t>(&callmon_pg_return);
  const auto full = reinterpret_cast<uintptr_t>(&callmon_patched_return);
  for (Frame* f = s->stack_base; f < s->top; ++f) {
    if (!f->ret || !f->sp) continue;  // half-pushed: its slot not redirected yet
    auto* slot = reinterpret_cast<uintptr_t*>(f->sp + 16);
    if (*slot == tramp || *slot == full) *slot = f->ret;
  }
  s->top = s->stack_base;
  s->overflow_depth = 0;
  s->guard &= ~(kGuardOverflow | kGuardUnwinding);
  s->outer_count = 0;
}

// restore_returns for a frame of a suspended ucontext context: its stack is not running,
// and may even be gone (a coroutine freed without finishing), so the slot is read and
// written through the kernel (a page no longer mapped fails instead of faulting) and only
// when it still holds the trampoline (a reused one holds something else).
void put_back_suspended(const Frame& f) {
  if (!f.ret || !f.sp) return;
  uintptr_t slot = f.sp + 16, now = 0;
  iovec mine{&now, sizeof now}, there{reinterpret_cast<void*>(slot), sizeof now};
  if (process_vm_readv(getpid(), &mine, 1, &there, 1, 0) != sizeof now) return;
  if (now != reinterpret_cast<uintptr_t>(&callmon_pg_return) &&
      now != reinterpret_cast<uintptr_t>(&callmon_patched_return))
    return;
  uintptr_t real = f.ret;
  iovec from{&real, sizeof real};
  process_vm_writev(getpid(), &from, 1, &there, 1, 0);
}

}  // namespace

unsigned attach_session() { return __atomic_load_n(&g_session, __ATOMIC_ACQUIRE); }
void attach_set_session(unsigned n) {
  if (n) __atomic_store_n(&g_ever, true, __ATOMIC_RELEASE);
  __atomic_store_n(&g_session, n, __ATOMIC_RELEASE);
}

void attach_note_thread(ThreadState* s) {
  unsigned session = attach_session();
  if (session == 0) return;  // not attached: nothing will end the files but the threads
  for (Entry& e : g_threads) {
    ThreadState* none = nullptr;
    if (__atomic_load_n(&e.state, __ATOMIC_RELAXED) == nullptr &&
        __atomic_compare_exchange_n(&e.state, &none, s, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
      e.session = session;
      e.handlers = signal_contexts_self();  // called by the state's own thread
      return;
    }
  }
  // Table full: this thread's file is ended by its thread's exit or the process's, not
  // by the detach (docs/patching.md).
}

void attach_forget_thread(ThreadState* s) {
  if (!__atomic_load_n(&g_ever, __ATOMIC_ACQUIRE)) return;  // every process not attached to
  if (Entry* e = find(s)) __atomic_store_n(&e->state, nullptr, __ATOMIC_RELEASE);
}

bool attach_revive(ThreadState* s) {
  unsigned session = attach_session();
  if (session == 0 || s->header) return false;  // a stopped file of this session (disk full)
  Entry* e = find(s);
  if (!e || e->session == session) return false;
  e->session = session;
  // Signals blocked across both steps: a handler's hook between them would find the thread
  // no longer stopped and push and write its calls before the attach's frames are taken
  // (which would then go above them), or the handler leave by siglongjmp and the frames
  // never be taken.
  SignalBlock block;
  // As a fork child's: a new file, the calls still open first as INHERIT records.
  thread_after_fork_child(s);
  // And the frames the tool found open on its stack at this attach.
  if (!(s->guard & kGuardStopped)) attach_inherit_take(s);
  return (s->guard & kGuardStopped) == 0;
}

bool attach_threads_busy(uintptr_t text_lo, uintptr_t text_hi) {
  unsigned session = attach_session();
  for (Entry& e : g_threads) {
    ThreadState* s = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
    if (!s || e.session != session) continue;
    if (s->guard & kGuardBusyMask) return true;
    // A handler on top of the runtime's code with the guard down: the exit trampoline
    // before callmon_pg_exit (the stop would empty the shadow stack it pops: the program
    // then died of "a hijacked return address is missing"), a fast path between its guard
    // check and its raise (it would write into the unmapped chunk). Only a live thread's
    // handler stack is read (a retired state's thread and its TLS are gone).
    if (text_lo < text_hi && s->header && !(s->header->flags & format::kFlagFinished) &&
        signal_contexts_interrupted_in(e.handlers, text_lo, text_hi))
      return true;
  }
  return false;
}

void attach_end_threads() {
  attach_inherit_restore_untaken();
  // Suspended ucontext contexts hold frames too, off every thread's shadow stack.
  context_stash_detach(&put_back_suspended);
  unsigned session = attach_session();
  for (Entry& e : g_threads) {
    ThreadState* s = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
    if (!s || e.session != session || !s->header) continue;
    // Retired (its thread has ended): its file is complete and the state is released by
    // the next thread set-up.
    if (s->header->flags & format::kFlagFinished) continue;
    // thread_finish names the file after the calling thread: keep the owner's name.
    char name[sizeof s->header->thread_name];
    memcpy(name, s->header->thread_name, sizeof name);
    thread_finish(s, true);
    memcpy(s->header->thread_name, name, sizeof name);
    if (s->chunk_base) munmap(s->chunk_base, s->chunk_size);
    munmap(s->header, format::kHeaderSize);
    s->chunk_base = nullptr;
    s->header = nullptr;
    s->cur = s->limit = nullptr;
    s->guard |= kGuardStopped;
    restore_returns(s);
  }
}

}  // namespace callmon::rt
