// Thread set-up, chunk switches, thread end and fork of the per-thread recording state.
#include "runtime/recording/thread_state.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/calibration/calibration.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/selection/filter_select.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/recording/recording_dir.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/attach_inherit.hpp"
#include "runtime/patching/attach_dlopen.hpp"

namespace callmon::rt {

__thread ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
__thread uint32_t t_runtime_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread uint64_t t_runtime_mask __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_runtime_cancel __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_runtime_cancel_type __attribute__((tls_model("initial-exec"))) = 0;

namespace {

using format::ThreadFileHeader;

constexpr int kMadvPopulateWrite = 23;  // MADV_POPULATE_WRITE, Linux 5.14
constexpr uint32_t kFirstWindow = 16 * 1024;
// 1 MiB, not 256 KiB: a window costs ~25 us of fallocate, pwrite and populate set-up
// besides its pages (bench/trace_growth.c with `windows`: 0.28 ms of CPU per MB of trace in
// 256 KiB windows, 0.20 in 1 MiB ones, 0.16-0.18 in 4 MiB ones, ext4 on Linux 6.18). Not the
// whole chunk: a busy thread keeps at most one window's populated pages ahead of its data.
constexpr uint32_t kMaxWindow = 1024 * 1024;

uint64_t chunk_offset(const ThreadState* s, uint64_t index) {
  return format::kHeaderSize + index * s->chunk_size;
}

// Makes [off, off+len) of the file real disk blocks. fallocate, not ftruncate: a sparse
// file that cannot get blocks later would kill the program with SIGBUS on a full disk.
// Past RLIMIT_FSIZE the kernel also raises SIGXFSZ, whose default action kills the
// program. Callers run with signals blocked, so it is only pending: take it back here, it
// was caused by the recorder, not by the program.
bool grow_file(int fd, uint64_t off, uint64_t len) {
  int r = fallocate(fd, 0, static_cast<off_t>(off), static_cast<off_t>(len));
  if (r != 0 && errno == EOPNOTSUPP) r = ftruncate(fd, static_cast<off_t>(off + len));
  if (r == 0) return true;
  if (errno == EFBIG) take_back_sigxfsz();
  return false;
}

// Zeros, written over a window's fresh bytes by fill_zeros.
alignas(4096) const uint8_t kZeroBlock[64 * 1024] = {};

// Writes zeros over [off, off+len) of the file with write(), not through the mapping: the
// page cache then gets the pages in large folios, filled by the kernel, and the mapping's
// MADV_POPULATE_WRITE only maps them. Faulting them in through the mapping allocated them a
// page at a time: 1.2-2.0 ms of CPU per MB of trace here against 0.6-0.7 this way
// (docs/runtime.md, "Where a call's cost goes"). The range holds nothing yet: the blocks
// fallocate gave it read as zeros. Returns false when the file cannot take them.
bool fill_zeros(int fd, uint64_t off, uint64_t len) {
  while (len > 0) {
    size_t n = len < sizeof kZeroBlock ? static_cast<size_t>(len) : sizeof kZeroBlock;
    ssize_t w = pwrite(fd, kZeroBlock, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<uint64_t>(w);
    len -= static_cast<uint64_t>(w);
  }
  return true;
}

// Extends the usable part of the chunk by one window: the file gets real blocks for it
// (plus the nested margin after it), zeros written into them (fill_zeros: cheaper page
// cache pages), and its pages are mapped writable in one system call.
// A write fault per page on a shared file mapping costs microseconds in a VM (~10 ns per
// recorded call); MAP_POPULATE would not help, it maps pages read-only for dirty tracking.
// Then one byte of every page is read: under a hypervisor the guest's first access to a
// page it has not used before also traps to the host (~3.5 us per 4 KiB page measured on a
// KVM guest), and neither MAP_POPULATE nor MADV_POPULATE_WRITE takes that trap. Taken here,
// it falls inside the chunk switch, which the caller records as a PAUSE; left to the hot
// path it would land, unmeasured, in whichever call is open (16-24% of a recorded run's
// time on that guest). On bare metal the reads cost ~1 ns per page.
// Windows start small and double up to kMaxWindow, so a short-lived thread neither
// allocates nor faults in a megabyte it never uses. (Kernels before 5.14 lack
// MADV_POPULATE_WRITE: pages then fault one by one.) Returns false when the file cannot
// grow.
// Opens of a file whose descriptor another thread closed before its use (EBADF) before the
// thread's recording gives up.
constexpr int kEbadfTries = 1000;

bool extend_window(ThreadState* s) {
  uint8_t* from = s->limit;
  uint8_t* last = s->real_end - kNestedMargin;
  uint8_t* to = from + s->window < last ? from + s->window : last;
  if (s->window < kMaxWindow) s->window *= 2;
  uint64_t base = chunk_offset(s, s->chunk_index);
  uint64_t off = base + static_cast<uint64_t>(from - s->chunk_base);
  uint64_t len = static_cast<uint64_t>(to - from) + kNestedMargin;
  // The nested margin of the window before (a chunk's first window has none) is already
  // there, and nested records or padding may be in it: only what follows it is fresh.
  uint64_t kept = from == s->chunk_base ? 0 : kNestedMargin;
  // EBADF: another thread of the program closed every descriptor (close_range, a daemon's
  // loop) between our open and its use; the file is opened again (kEbadfTries: a program
  // that closes in a tight loop wins a few rounds in a row).
  bool ok = false;
  for (int tries = 0; tries < kEbadfTries && !ok; ++tries) {
    int fd = open_recording_file(s->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    ok = grow_file(fd, off, len) && fill_zeros(fd, off + kept, len - kept);
    const int why = errno;
    close(fd);
    if (!ok && why != EBADF) return false;
    errno = why;
  }
  if (!ok) return false;
  madvise(from, len, kMadvPopulateWrite);
  for (uint64_t i = 0; i < len; i += 4096) (void)*static_cast<volatile const uint8_t*>(from + i);
  signal_fence();
  s->limit = to;
  // Everything before the new window is written: a reader finding the file shorter than
  // this knows data was lost.
  if (s->header) {
    s->header->committed_end = off;
    publish_entry_checks(s);  // here, off the hooks' path, and at the end
  }
  return true;
}

// Maps chunk `index` of the thread's file and makes its first window usable. The file is
// opened by path each time instead of keeping a descriptor: programs close or dup2 over
// every fd. Mapping past the end of the file is fine; only the windows are ever touched.
// The chunk mappings made in this process so far (ThreadState::chunk_serial).
uint64_t g_chunk_serials = 0;

bool map_chunk(ThreadState* s, uint64_t index) {
  uint64_t off = chunk_offset(s, index);
  void* mem = MAP_FAILED;
  for (int tries = 0; tries < kEbadfTries && mem == MAP_FAILED; ++tries) {  // EBADF: extend_window
    int fd = open_recording_file(s->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    mem = mmap(nullptr, s->chunk_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
               static_cast<off_t>(off));
    const int why = errno;
    close(fd);
    if (mem == MAP_FAILED && why != EBADF) return false;
    errno = why;
  }
  if (mem == MAP_FAILED) return false;
  uint8_t* old = s->chunk_base;
  uint8_t* old_limit = s->limit;
  uint64_t old_index = s->chunk_index;
  s->chunk_base = static_cast<uint8_t*>(mem);
  s->chunk_index = index;
  s->real_end = s->chunk_base + s->chunk_size;
  s->limit = s->chunk_base;
  if (!extend_window(s)) {
    munmap(mem, s->chunk_size);
    s->chunk_base = old;
    s->chunk_index = old_index;
    s->real_end = old ? old + s->chunk_size : nullptr;
    s->limit = old_limit;
    return false;
  }
  if (old) munmap(old, s->chunk_size);
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  s->chunk_serial = __atomic_add_fetch(&g_chunk_serials, 1, __ATOMIC_RELAXED);
  signal_fence();
  s->cur = s->chunk_base;  // last: a nested hook sees either the old chunk or this one
  if (s->header) s->header->committed_end = off;
  return true;
}

void stop_recording(ThreadState* s, const char* why) {
  s->guard |= kGuardStopped;
  if (s->header) s->header->flags |= format::kFlagStopped;
  if (recording_sealed()) {  // said once for the process, and write may be filtered
    if (s->header) s->header->flags |= format::kFlagSandboxed;
    return;
  }
  char msg[4400];
  LineBuf b(msg, sizeof msg);
  b.str("cannot extend ").str(s->path).str(": ").str(why).str("; the recording of thread ");
  b.dec(static_cast<uint64_t>(s->tid)).str(" stops here, the program runs on");
  diag(msg);
}

// Creates the thread's event file and maps its header and first chunk.
bool open_thread_file(ThreadState* s, uint32_t flags, pid_t tid = 0) {
  s->tid = tid ? tid : static_cast<pid_t>(gettid());
  int fd = -1;
  for (unsigned n = 0; n < 1000 && fd < 0; ++n) {
    LineBuf p(s->path, sizeof s->path);
    p.str(g_proc.dir).ch('/').str(g_proc.key).ch('.').dec(static_cast<uint64_t>(s->tid));
    if (n) p.ch('-').dec(n);
    p.str(".events");
    fd = open_recording_file(s->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, g_proc.file_mode);
    if (fd < 0 && errno != EEXIST) return false;
  }
  if (fd < 0) return false;
  void* hdr = MAP_FAILED;
  for (int tries = 0; tries < kEbadfTries; ++tries) {  // EBADF: extend_window
    if (tries) fd = open_recording_file(s->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) break;
    if (grow_file(fd, 0, format::kHeaderSize))
      hdr = mmap(nullptr, format::kHeaderSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int why = errno;
    close(fd);
    fd = -1;
    errno = why;
    if (hdr != MAP_FAILED || why != EBADF) break;
  }
  if (hdr == MAP_FAILED) {
    // No header (a full disk): no file either, rather than an empty one readers must skip.
    const int why = errno;
    unlink_recording_file(s->path);
    errno = why;
    return false;
  }
  auto* h = static_cast<ThreadFileHeader*>(hdr);
  memcpy(h->magic, format::kThreadMagic, sizeof h->magic);
  h->version = format::kTraceVersion;
  h->header_size = format::kHeaderSize;
  h->chunk_size = s->chunk_size;
  h->pid = static_cast<uint32_t>(g_proc.pid);
  h->tid = static_cast<uint32_t>(s->tid);
  h->clock = static_cast<uint32_t>(g_clock_tsc ? format::ClockKind::kTsc
                                               : format::ClockKind::kMonotonic);
  h->flags = flags;
  // The deltas' unit, fixed for the file: the state encodes in it from the first record.
  h->tick_shift = g_tick_shift;
  s->tick_shift = g_tick_shift;
  s->tick_mask = (1u << g_tick_shift) - 1;
  h->start_ticks = read_ticks();
  s->calib_last = h->start_ticks;
  h->committed_end = format::kHeaderSize;
  copy_str(h->process_key, sizeof h->process_key, g_proc.key);
  prctl(PR_GET_NAME, h->thread_name);
  s->header = h;
  // A fork child's file starts its own count.
  s->covered_before = s->covered_after = s->covered_exit = s->burst_before = 0;
  s->chunk_base = nullptr;
  return map_chunk(s, 0);
}

void release_records(ThreadState* s) {
  if (s->records) munmap(s->records, s->stack_bytes / sizeof(Frame) * sizeof(FrameRecord));
  s->records = nullptr;
  if (s->selected) munmap(s->selected, s->stack_bytes / sizeof(Frame));
  s->selected = nullptr;
}

void unmap_file(ThreadState* s) {
  if (s->chunk_base) munmap(s->chunk_base, s->chunk_size);
  if (s->header) munmap(s->header, format::kHeaderSize);
  s->chunk_base = nullptr;
  s->header = nullptr;
}

// Finished threads' states, waiting for their threads to be gone (see thread_finish).
// Touched only at thread set-up and end, under a spin lock.
ThreadState* g_retired = nullptr;
int g_retired_lock = 0;

void lock_retired() {
  while (__atomic_exchange_n(&g_retired_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
}
void unlock_retired() { __atomic_store_n(&g_retired_lock, 0, __ATOMIC_RELEASE); }

void retire(ThreadState* s) {
  lock_retired();
  s->retired_next = g_retired;
  g_retired = s;
  unlock_retired();
}

// Trims the file of a state whose thread has exited to the end of its data (records that
// followed END included) and releases everything.
void release(ThreadState* s) {
  attach_forget_thread(s);
  if (s->header && s->chunk_base) {
    uint64_t end = chunk_offset(s, s->chunk_index) + static_cast<uint64_t>(s->cur - s->chunk_base);
    if (end > s->header->end_offset) s->header->end_offset = s->header->committed_end = end;
  }
  uint64_t end = s->header ? s->header->end_offset : 0;
  unmap_file(s);
  if (end) truncate(s->path, static_cast<off_t>(end));
  release_records(s);
  monitor_release(s);
  munmap(s->stack_base, s->stack_bytes);
  munmap(s, sizeof(ThreadState));
}

// Releases the retired states whose threads no longer exist (tgkill with signal 0 fails
// with ESRCH). A tid the kernel reused keeps its old state for later: harmless.
void reclaim_retired() {
  lock_retired();
  ThreadState* gone = nullptr;
  for (ThreadState** p = &g_retired; *p;) {
    ThreadState* s = *p;
    if (syscall(SYS_tgkill, g_proc.pid, s->tid, 0) != 0 && errno == ESRCH) {
      *p = s->retired_next;
      s->retired_next = gone;
      gone = s;
    } else {
      p = &s->retired_next;
    }
  }
  unlock_retired();
  while (gone) {
    ThreadState* next = gone->retired_next;
    release(gone);
    gone = next;
  }
}

// The main thread's state. A hook in an ifunc resolver runs while the loader relocates the
// program, before it initialises the static TLS blocks: the loader then zeroes t_state, and
// the main thread's next hook would start a second thread file. It takes its state back.
ThreadState* g_main_state = nullptr;

// Thread set-ups that failed: the epoch of the last failure on this thread, and the
// current epoch (a fork child and an attach start a new one, where the cause may be gone).
uint32_t g_setup_epoch = 1;
__thread uint32_t t_failed_epoch __attribute__((tls_model("initial-exec"))) = 0;
uint32_t g_said_epoch = 0;  // the epoch whose first failure was said on stderr

// The calling thread's set-up failed for `what` (`why`: the system's reason, or null): it
// runs untraced for this epoch. Said on stderr once per epoch (a server's hundred workers
// failing alike would say it a hundred times) and, per thread, in the meta file when it
// can be written, where `info` names the threads the recording lacks.
ThreadState* setup_failed(const char* what, const char* why = nullptr) {
  const uint32_t epoch = __atomic_load_n(&g_setup_epoch, __ATOMIC_RELAXED);
  t_failed_epoch = epoch;
  const auto tid = static_cast<uint64_t>(gettid());
  char line[512];
  LineBuf m(line, sizeof line);
  m.str("untraced ").dec(tid).ch(' ').str(what);
  if (why) m.str(": ").str(why);
  m.ch('\n');
  meta_append(m.c_str(), static_cast<unsigned>(m.size()));
  if (__atomic_exchange_n(&g_said_epoch, epoch, __ATOMIC_RELAXED) != epoch) {
    char msg[600];
    LineBuf b(msg, sizeof msg);
    b.str("thread ").dec(tid).str(": ").str(what);
    if (why) b.str(": ").str(why);
    b.str("; it runs untraced, as will other threads that fail so (said once)");
    diag(msg);
  }
  return nullptr;
}

ThreadState* reattach_main_state() {
  ThreadState* m = __atomic_load_n(&g_main_state, __ATOMIC_ACQUIRE);
  if (!m || m->tid != g_proc.pid || gettid() != m->tid) return nullptr;
  pthread_setspecific(thread_key(), m);
  t_state = m;
  return m;
}

// The frames a new thread's shadow stack reserves: `wanted`, unless the program runs under
// an address-space limit (RLIMIT_AS, `ulimit -v`), which counts every reservation,
// MAP_NORESERVE or not. Then at most 1/1024 of the limit per thread (1 MiB, some 40 000
// frames, under a 1 GiB limit), so that the threads' reservations leave the program what
// it may map: at 192 MiB each, eight threads under a 1 GB limit left no room for the
// program's own 512 MB. Calls deeper than the reservation are still recorded (hooks.cpp,
// "Out of shadow stack").
uint64_t shadow_stack_depth(uint64_t wanted) {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return wanted;
  uint64_t cap = as.rlim_cur / 1024 / sizeof(Frame);
  if (cap < 1024) cap = 1024;
  return wanted < cap ? wanted : cap;
}

}  // namespace

bool thread_open_for(ThreadState* s, pid_t tid) {
  s->chunk_size = g_proc.chunk_size;
  s->window = kFirstWindow;
  if (open_thread_file(s, 0, tid)) return true;
  unmap_file(s);
  return false;
}

void thread_setup_retry() { __atomic_add_fetch(&g_setup_epoch, 1, __ATOMIC_RELAXED); }

ThreadState* thread_setup() {
  // A thread whose set-up failed runs untraced (until a fork or the next attach): every
  // hook of it came here and tried again, printing its diagnostic each time (2.5 million
  // lines on stderr for a thread of 100 000 loops; a server's workers slowed to a halt).
  if (t_failed_epoch == __atomic_load_n(&g_setup_epoch, __ATOMIC_RELAXED)) return nullptr;
  // Behind a seccomp filter no file can be created (recording_seal): untraced, unsaid.
  if (recording_sealed()) {
    t_failed_epoch = __atomic_load_n(&g_setup_epoch, __ATOMIC_RELAXED);
    return nullptr;
  }
  ErrnoSaver es;
  RuntimeScope rs;  // pthread_setspecific, mmap: maybe the program's own
  if (!process_setup()) return nullptr;
  SignalBlock block;
  if (t_state) return t_state;  // a signal handler's hook got here first
  if (ThreadState* s = reattach_main_state()) return s;
  reclaim_retired();
  void* mem = mmap(nullptr, sizeof(ThreadState), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return setup_failed("no memory for its state");
  auto* s = static_cast<ThreadState*>(mem);
  s->chunk_size = g_proc.chunk_size;
  s->window = kFirstWindow;
  // The shadow stack reserves address space for max_depth frames; pages are only used as
  // deep as the program goes (MAP_NORESERVE), so 100 000-deep recursion costs 1.6 MB.
  uint64_t depth = shadow_stack_depth(g_proc.max_depth);
  void* stack = MAP_FAILED;
  for (; depth >= 1024 && stack == MAP_FAILED; depth /= 4)
    stack = mmap(nullptr, depth * sizeof(Frame), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) {
    munmap(mem, sizeof(ThreadState));
    return setup_failed("no memory for its shadow stack");
  }
  depth *= 4;  // undo the last division of the loop
  s->stack_base = static_cast<Frame*>(stack);
  s->top = s->stack_base;
  s->stack_bytes = depth * sizeof(Frame);
  s->stack_limit = s->stack_base + depth;
  s->record_depth = g_proc.record_depth;
  s->min_ticks = g_proc.min_ticks;
  if (s->min_ticks) {
    void* recs = mmap(nullptr, depth * sizeof(FrameRecord), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (recs == MAP_FAILED) s->min_ticks = 0;  // recorded unfiltered rather than not at all
    else s->records = static_cast<FrameRecord*>(recs);
  }
  if (filter_on()) {
    void* sel = mmap(nullptr, depth, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (sel != MAP_FAILED) s->selected = static_cast<uint8_t*>(sel);  // else unfiltered
  }
  if (s->record_depth || s->min_ticks || s->selected) s->guard |= kGuardFilter;
  if (monitor_mode()) {
    // No event file: the hooks call the monitor instead.
    if (!monitor_thread_setup(s)) {
      release_records(s);
      munmap(stack, s->stack_bytes);
      munmap(mem, sizeof(ThreadState));
      return setup_failed("cannot set up the monitor's shadow stack");
    }
  } else if (!open_thread_file(s, 0)) {
    const char* why = strerrordesc_np(errno);
    release_records(s);
    unmap_file(s);
    munmap(stack, s->stack_bytes);
    munmap(mem, sizeof(ThreadState));
    return setup_failed("cannot create its event file", why);
  }
  // Set up from the runtime's own work (a RuntimeScope): the fast paths must not record
  // what the program's interposed functions do for it meanwhile.
  if (in_runtime()) s->guard |= kGuardRuntime;
  pthread_setspecific(thread_key(), s);
  t_state = s;
  if (s->tid == g_proc.pid) __atomic_store_n(&g_main_state, s, __ATOMIC_RELEASE);
  attach_note_thread(s);  // an attach's detach ends its file (attach_threads.hpp)
  attach_inherit_take(s);  // frames open at an attach (attach_inherit.hpp)
  return s;
}

// A calibration in the run (calibration.hpp) when the thread's last one is older than
// CALLMON_CALIB_MS: the probes' cost drifts with the machine's load and the host's phases,
// and compensation applies the one measured nearest to each call (docs/runtime.md). Inside
// the chunk switch's PAUSE; its CALIB record follows the record being written.
void calibrate_if_due(ThreadState* s, uint64_t now) {
  if (g_proc.calib_interval == 0 || now - s->calib_last < g_proc.calib_interval) return;
  s->calib_last = now;
  ProbeCost c;
  if (!calibrate_in_run(&c)) return;
  s->calib_inner = static_cast<uint64_t>(c.inner * format::kCalibScale + 0.5);
  s->calib_outer = static_cast<uint64_t>(c.outer * format::kCalibScale + 0.5);
}

void thread_fill_chunk(ThreadState* s) {
  SignalBlock block;
  if (s->guard & kGuardStopped) return;
  while (s->limit < s->real_end - kNestedMargin)
    if (!extend_window(s)) return;  // a later switch_chunk stops the recording
}

bool switch_chunk(ThreadState* s, uint8_t* p, unsigned n) {
  ErrnoSaver es;
  RuntimeScope rs;  // ftruncate, mmap, memcpy: maybe the program's own
  if (recording_sealed()) {  // behind a seccomp filter: no file grows (recording_seal)
    stop_recording(s, nullptr);
    return false;
  }
  SignalBlock block;
  // A signal handler's hook may have switched already between our xadd and the block.
  if (s->cur <= s->limit) return true;
  // What we reserved inside the chunk becomes padding: nested records may follow it.
  uint8_t* usable = s->limit + kNestedMargin;  // what the file has blocks for
  if (p < usable) {
    uint8_t* e = p + n < usable ? p + n : usable;
    memset(p, format::kPadByte, static_cast<size_t>(e - p));
  }
  uint64_t start = read_ticks();
  bool ok;
  if (s->limit < s->real_end - kNestedMargin) {
    // Only the window is used up: extend it. The encoding state stays valid and the
    // cursor stays where it is (a signal's records may already follow our padding).
    ok = extend_window(s);
  } else {
    ok = map_chunk(s, s->chunk_index + 1);
  }
  if (!ok) {
    stop_recording(s, errno ? strerror(errno) : "mapping failed");
    return false;
  }
  calibrate_if_due(s, start);
  // `record -p`: a module loaded behind the wrappers' back (attach_dlopen.hpp): the pass at
  // this thread's next hook, as after a dlopen.
  if (attach_dl_poked()) {
    __atomic_or_fetch(&s->guard, kGuardRescan, __ATOMIC_RELAXED);
    request_rescan();
  }
  s->pause_end = read_ticks();
  s->pause_ticks += s->pause_end > start ? s->pause_end - start : 0;
  return true;
}

bool restart_chunk(ThreadState* s) {
  ErrnoSaver es;
  RuntimeScope rs;
  if (recording_sealed()) {
    stop_recording(s, nullptr);
    return false;
  }
  SignalBlock block;
  // The data ends here: a zero byte (past it may be padding or an abandoned store).
  if (s->cur < s->limit + kNestedMargin) *s->cur = 0;
  uint64_t start = read_ticks();
  if (!map_chunk(s, s->chunk_index + 1)) {
    stop_recording(s, errno ? strerror(errno) : "mapping failed");
    return false;
  }
  s->pause_end = read_ticks();
  s->pause_ticks += s->pause_end > start ? s->pause_end - start : 0;
  return true;
}

void thread_finish(ThreadState* s, bool process_exit) {
  ErrnoSaver es;
  RuntimeScope rs;
  if (s->monitor) {
    monitor_thread_finish(s);
    if (!process_exit) retire(s);
    return;
  }
  SignalBlock block;
  s->guard += 1;
  if (s->header && !(s->guard & kGuardStopped)) {
    uint64_t t = read_ticks();
    put_hidden(s, false, t);  // the calls still open made them: before END closes them
    write_special(s, false, format::kCodeEnd, t, nullptr, 0);
    if (!(s->guard & kGuardStopped)) {
      uint64_t end = chunk_offset(s, s->chunk_index) + static_cast<uint64_t>(s->cur - s->chunk_base);
      if (!recording_sealed()) prctl(PR_GET_NAME, s->header->thread_name);
      s->header->end_offset = end;
      s->header->committed_end = end;
      s->header->flags |= format::kFlagFinished;
      publish_entry_checks(s);
    }
  }
  s->guard -= 1;
  if (process_exit && recording_sealed()) return;  // the tail's blocks stay (no syscall)
  if (process_exit) {
    // Give back the disk blocks of the chunk's unused tail. The mapping stays valid (a
    // later write refills the hole), which truncating would not allow.
    uintptr_t used = static_cast<uintptr_t>(s->cur - s->chunk_base);
    uint64_t keep = (used + 4095) & ~uint64_t{4095};
    if (keep < s->chunk_size) {
      int fd = open_recording_file(s->path, O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(chunk_offset(s, s->chunk_index) + keep),
                  static_cast<off_t>(s->chunk_size - keep));
        close(fd);
      }
    }
    return;
  }
  retire(s);
}

void retired_after_fork_child() {
  for (ThreadState* s = g_retired; s;) {
    ThreadState* next = s->retired_next;
    unmap_file(s);
    release_records(s);
    monitor_release(s);
    munmap(s->stack_base, s->stack_bytes);
    munmap(s, sizeof(ThreadState));
    s = next;
  }
  g_retired = nullptr;
  g_retired_lock = 0;
}

void thread_after_fork_child(ThreadState* s) {
  SignalBlock block;
  // The mappings were inherited from the parent and are MAP_SHARED with its files: drop
  // them before anything is written.
  unmap_file(s);
  // ENTERs written in the parent's file can no longer be taken back.
  if (s->records)
    for (Frame* f = s->stack_base; f < s->top; ++f) s->records[f - s->stack_base].after = nullptr;
  s->window = kFirstWindow;
  // The parent's unseen work: its next record writes it in its own file.
  s->hidden_filtered = s->hidden_taken = s->hidden_capture = 0;
  s->guard &= ~(kGuardStopped | kGuardUnwinding);
  s->outer_count = 0;
  if (!open_thread_file(s, format::kFlagForkChild)) {
    s->guard |= kGuardStopped;
    return;
  }
  pthread_setspecific(thread_key(), s);
  // The calls open at fork are open in the child too: tell the reader, outermost first.
  uint64_t t = read_ticks();
  uint64_t fields[1 + kInheritBatch];
  Frame* end = s->top;
  for (Frame* f = s->stack_base; f < end;) {
    unsigned k = 0;
    for (; f < end && k < kInheritBatch; ++f)
      if (frame_recorded(s, f)) fields[1 + k++] = f->fn;
    if (k == 0) break;
    fields[0] = k;
    write_special(s, false, format::kCodeInherit, t, fields, k + 1);
  }
}

}  // namespace callmon::rt
