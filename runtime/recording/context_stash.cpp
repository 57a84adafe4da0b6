// The suspended contexts' frames (context_stash.hpp): one process-wide table, since a
// context may be resumed on another thread than the one that suspended it. Small and
// rarely touched (once per switch), so a lock and linear searches do.
#include "runtime/recording/context_stash.hpp"

#include <sys/mman.h>

#include "runtime/core/clock.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/patching/attach_inherit.hpp"
#include "runtime/recording/event_writer.hpp"

namespace callmon::rt {

namespace {

// Contexts suspended at once that the runtime keeps track of. Beyond that the oldest
// anonymous one (a setcontext's, rarely resumed) is forgotten first.
constexpr unsigned kMaxStashes = 4096;

struct Stash {
  const void* key;     // the ucontext_t it was saved in; nullptr: anonymous
  uint64_t serial;     // when it was set aside (eviction order)
  uint32_t n;          // frames, outermost first; 0: the entry is free
  uint32_t cap;        // room in `frames` and `sel`
  Frame* frames;
  uint8_t* sel;        // ThreadState::selected of each frame
};

Stash g_stash[kMaxStashes];
unsigned g_high;        // entries [0, g_high) have been used
uint64_t g_serial;
int g_lock;
unsigned g_live;        // entries with frames (0: nothing to search)

// The key of the context this thread runs, as the runtime last switched to it.
__thread const void* t_current __attribute__((tls_model("initial-exec")));

// The table's lock, taken with signals blocked (a handler may switch contexts too).
class StashLock {
 public:
  StashLock() {
    while (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
  }
  ~StashLock() {
    __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
  }  // then block_ restores the mask

 private:
  SignalBlock block_;  // constructed before the lock is taken, destroyed after it is let go
};

Stash* find_key(const void* key) {
  for (unsigned i = 0; i < g_high; ++i)
    if (g_stash[i].n && g_stash[i].key == key) return &g_stash[i];
  return nullptr;
}

// The entry with the lowest key in (lo, lo + window].
Stash* find_near(uintptr_t lo, uintptr_t window) {
  Stash* best = nullptr;
  for (unsigned i = 0; i < g_high; ++i) {
    auto k = reinterpret_cast<uintptr_t>(g_stash[i].key);
    if (g_stash[i].n && k > lo && k - lo <= window &&
        (!best || k < reinterpret_cast<uintptr_t>(best->key)))
      best = &g_stash[i];
  }
  return best;
}

void release(Stash* e) {
  if (e->n) --g_live;
  e->n = 0;
  e->key = nullptr;
}

// An entry for `n` frames under `key` (replacing the key's earlier one, whose frames were
// never resumed), or nullptr if no memory could be had.
Stash* take_entry(const void* key, uint32_t n) {
  Stash* e = key ? find_key(key) : nullptr;
  if (!e) {
    for (unsigned i = 0; i < g_high && !e; ++i)
      if (!g_stash[i].n && g_stash[i].cap >= n) e = &g_stash[i];
    for (unsigned i = 0; i < g_high && !e; ++i)
      if (!g_stash[i].n) e = &g_stash[i];
    if (!e && g_high < kMaxStashes) e = &g_stash[g_high++];
    if (!e) {  // full: forget the oldest, anonymous ones first
      for (int anon = 1; anon >= 0 && !e; --anon)
        for (unsigned i = 0; i < kMaxStashes; ++i)
          if ((g_stash[i].key == nullptr) == (anon == 1) && (!e || g_stash[i].serial < e->serial))
            e = &g_stash[i];
      release(e);
    }
  }
  if (e->cap < n) {
    uint32_t cap = n < 64 ? 64 : n;
    void* mem = mmap(nullptr, cap * (sizeof(Frame) + 1), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    if (e->frames) munmap(e->frames, e->cap * (sizeof(Frame) + 1));
    e->frames = static_cast<Frame*>(mem);
    e->sel = reinterpret_cast<uint8_t*>(e->frames + cap);
    e->cap = cap;
  }
  return e;
}

bool recording(const ThreadState* s) {
  return s->header && !(s->guard & (kGuardStopped | kGuardMonitor));
}

// Sets the thread's open frames aside under `key` and empties its shadow stack; their
// calls are suspended (UNWIND reason 4). The caller holds the guard and the lock.
void suspend(ThreadState* s, const void* key, bool nested, uint64_t t) {
  Frame* base = s->stack_base;
  auto n = static_cast<uint32_t>(s->top - base);
  if (n == 0) {
    if (key)
      if (Stash* old = find_key(key)) release(old);  // the context has no frames now
    return;
  }
  if (Stash* e = take_entry(key, n)) {
    if (!e->n) ++g_live;
    e->key = key;
    e->serial = ++g_serial;
    e->n = n;
    for (uint32_t i = 0; i < n; ++i) {
      e->frames[i] = base[i];
      e->sel[i] = s->selected ? s->selected[i] : 1;
    }
  }
  uint64_t count = frames_recorded(s, base, s->top);
  pop_frames(s, base);
  if (count && recording(s)) put_unwind(s, nested, t, count, format::UnwindReason::kSuspended);
}

// Puts the frames of `e` back on the thread's (empty) shadow stack and frees the entry;
// their calls go on (INHERIT). The caller holds the guard and the lock.
void resume(ThreadState* s, Stash* e, bool nested, uint64_t t) {
  uint32_t room = static_cast<uint32_t>(s->stack_limit - s->stack_base);
  uint32_t n = e->n < room ? e->n : room;
  for (uint32_t i = 0; i < n; ++i) {
    const Frame& f = e->frames[i];
    Frame* p = push_frame(s, f.fn, f.sp, f.ret);
    if (s->selected) s->selected[p - s->stack_base] = e->sel[i];
    if (s->records) s->records[p - s->stack_base].after = nullptr;  // no take-back
  }
  release(e);
  if (!recording(s)) return;
  uint64_t fields[1 + kInheritBatch];
  for (Frame* f = s->stack_base; f < s->top;) {
    unsigned k = 0;
    for (; f < s->top && k < kInheritBatch; ++f)
      if (frame_recorded(s, f)) fields[1 + k++] = f->fn;
    if (k == 0) break;
    fields[0] = k;
    write_special(s, nested, format::kCodeInherit, t, fields, k + 1);
  }
}

}  // namespace

void context_switch(const void* out, const void* in, uintptr_t in_sp, uintptr_t in_window) {
  // Attached (`record -p`): the frames the attach found open on this thread's stack belong
  // to the context switching out, so they are taken now and set aside with it. Left to the
  // thread's first hook, they were taken on the incoming context's stack: a -pg/--patch
  // frame of `main` under a fiber's frames made the fiber's switch back look like a jump
  // up one stack (up_the_stack below), its frames were closed as longjmp'd over, and their
  // hijacked returns, found nowhere, killed the program (SIGILL).
  ThreadState* s = attach_inherit_claim(t_state);
  if (!s || in_runtime()) {
    t_current = in;
    return;
  }
  ErrnoSaver es;
  bool nested = guard_enter(s);
  bool up_the_stack = false;
  {
    StashLock lock;
    Stash* e = !in ? nullptr
               : in_window ? find_near(reinterpret_cast<uintptr_t>(in), in_window)
                           : find_key(in);
    // A context saved by getcontext in a frame that is still open (no frames of its own
    // set aside): a jump up this stack, as longjmp's. `here` is below every open frame.
    uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    up_the_stack = !e && s->top > s->stack_base && in_sp > here &&
                   in_sp <= s->stack_base[0].sp + 32;
    if (!up_the_stack) {
      uint64_t t = read_ticks();
      suspend(s, out, nested, t);
      const void* key = e ? e->key : in;
      if (e) resume(s, e, nested, t);
      t_current = key;
    }
  }
  guard_leave(s);
  if (up_the_stack) unwind_below(in_sp - 16, format::UnwindReason::kLongjmp);
}

void context_resumed(const void* out) {
  if (t_current == out) return;
  t_current = out;
  ThreadState* s = t_state;
  if (!s || in_runtime() || !__atomic_load_n(&g_live, __ATOMIC_RELAXED)) return;
  ErrnoSaver es;
  bool nested = guard_enter(s);
  {
    StashLock lock;
    if (Stash* e = find_key(out)) {
      // What is left of the context that switched here unseen (a finished one's uc_link:
      // normally nothing) is set aside anonymously.
      uint64_t t = read_ticks();
      suspend(s, nullptr, nested, t);
      resume(s, e, nested, t);
    }
  }
  guard_leave(s);
}

bool context_adopt(ThreadState* s, uintptr_t fn, uintptr_t sp, bool nested) {
  if (!__atomic_load_n(&g_live, __ATOMIC_RELAXED)) return false;
  StashLock lock;
  Stash* best = nullptr;
  uintptr_t best_d = ~uintptr_t{0};
  for (unsigned i = 0; i < g_high; ++i) {
    Stash* e = &g_stash[i];
    for (uint32_t j = 0; j < e->n; ++j) {
      const Frame& f = e->frames[j];
      if (fn == 0 ? f.sp == sp : (f.fn == fn && f.sp >= sp && f.sp - sp < best_d)) {
        best = e;
        best_d = fn == 0 ? 0 : f.sp - sp;
      }
    }
  }
  if (!best) return false;
  const void* key = best->key;
  uint64_t t = read_ticks();
  suspend(s, nullptr, nested, t);
  resume(s, best, nested, t);
  t_current = key;
  return true;
}

bool context_stash_detach(void (*put_back)(const Frame& f)) {
  // Every other thread is stopped, none inside a switch (the detach waits until no thread
  // is busy in the runtime), so the lock is free; if it is not, waiting would never end.
  if (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) return false;
  for (unsigned i = 0; i < g_high; ++i) {
    Stash* e = &g_stash[i];
    for (uint32_t j = 0; j < e->n; ++j) put_back(e->frames[j]);
    release(e);
  }
  __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
  return true;
}

void context_stash_after_fork() { __atomic_store_n(&g_lock, 0, __ATOMIC_RELAXED); }

}  // namespace callmon::rt
