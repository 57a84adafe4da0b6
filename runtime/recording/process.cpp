// Process set-up, the meta file, modules, fork and exit handling (see process.hpp).
#include "runtime/recording/process.hpp"
#include "runtime/patching/own_unwinder.hpp"
#include "runtime/patching/entry_patch.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/calibration/calibration.hpp"
#include "runtime/selection/filter_select.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/recording/context_stash.hpp"
#include "runtime/recording/other_namespaces.hpp"
#include "runtime/patching/got_redirect.hpp"
#include "runtime/patching/namespace_walk.hpp"
#include "runtime/patching/sled_patch.hpp"
#include "runtime/patching/mcount_entry.hpp"
#include "runtime/patching/xray_sleds.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/recording/recording_dir.hpp"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

ProcessState g_proc;

namespace {

// The program's executable, from /proc/self/exe, remembered: a fork child of a program that
// chrooted (a daemon) has no /proc, and its image is its parent's. Empty when never read.
char g_exe_path[PATH_MAX];

const char* self_exe() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    copy_str(g_exe_path, sizeof g_exe_path, exe);
  }
  return g_exe_path;
}

enum : int { kUnset = 0, kSettingUp = 1, kOn = 2, kOff = 3 };
int g_state = kUnset;
// Set by the first process_finish of this image (a vfork child's exit may have moved the
// parent's to another path, process_finish_rearm; it never runs twice).
int g_finished = 0;
int g_rescan = 0;
int g_scan_lock = 0;
pthread_key_t g_thread_key;
// The thread running setup_locked: a hook it reaches meanwhile (a monitor's constructor,
// code that loading the monitor runs) must not wait for itself.
__thread bool t_in_setup __attribute__((tls_model("initial-exec"))) = false;

// Module lines already written, by start address and path hash, so rescans add only new
// objects. Fixed size: no allocation in the runtime.
struct ModuleSeen {
  uintptr_t start;
  uint64_t path_hash;
  bool present;  // found by the current presence check (modules_after_unload)
};
ModuleSeen g_modules[4096];
unsigned g_module_count = 0;
// Set by the detach (process_end_for_attach) for the next attach to write every module line
// again. The detach runs with the other threads stopped, maybe one inside a scan (a dlclose
// under way); emptying the table under that scan's feet made its next removal index
// g_modules[-1u] (SIGSEGV in the program, after the detach). The table is emptied by the
// next one who takes the scan lock (lock_scan).
int g_modules_reset = 0;

// Takes the module scan lock; empties the table first if a detach asked for it.
void lock_scan() {
  while (__atomic_exchange_n(&g_scan_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  if (__atomic_exchange_n(&g_modules_reset, 0, __ATOMIC_ACQ_REL)) g_module_count = 0;
}
void unlock_scan() { __atomic_store_n(&g_scan_lock, 0, __ATOMIC_RELEASE); }

uint64_t hash_str(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<uint8_t>(*s)) * 1099511628211ull;
  return h;
}

void thread_key_destructor(void* p) {
  auto* s = static_cast<ThreadState*>(p);
  RuntimeScope rs;
  if (s && s == t_state) thread_finish(s);
}

// The `overhead` line of a calibration, and with the fenced clock its `overhead-exposed`.
void put_overhead(LineBuf& b, const ProbeCost& cost) {
  b.str("overhead ").milli(cost.inner).ch(' ').milli(cost.outer).ch('\n');
  if (g_clock_fenced)
    b.str("overhead-exposed ").milli(cost.exposed_in).ch(' ').milli(cost.exposed_out).ch('\n');
  if (cost.overlap_up >= 0)
    b.str("overhead-overlap ").milli(cost.overlap_up).ch(' ').milli(cost.overlap_down).ch('\n');
  if (cost.hidden >= 0) b.str("overhead-hidden ").milli(cost.hidden).ch('\n');
  if (cost.taken_back >= 0) b.str("overhead-taken-back ").milli(cost.taken_back).ch('\n');
  if (cost.libcall_outer > 0)
    b.str("overhead-libcall ").milli(cost.libcall_inner).ch(' ').milli(cost.libcall_outer).ch('\n');
}

// Adds the library-call probe's own cost to `cost` (calibration.hpp) when library calls
// are recorded (not --no-libcall).
void calibrate_libcall(ProbeCost& cost) {
  if (g_proc.options.libcall[0] == '0') return;
  ProbeCost lc = calibrate_libcall_cost(g_pg_hooks);
  if (lc.outer <= 0) return;  // a slow path: compensated as the other calls
  cost.libcall_inner = lc.inner;
  cost.libcall_outer = lc.outer;
}

// The start-up calibration (calibration.hpp), with its CPU time (recalibrate_at_exit).
void calibrate_at_start() {
  uint64_t calibration_start = thread_cpu_ns();
  g_proc.probe = calibrate_probe_cost(g_pg_hooks);
  calibrate_libcall(g_proc.probe);
  g_proc.calibration_cpu_ns = thread_cpu_ns() - calibration_start;
}

// Creates `<dir>/<pid>.<gen>.meta` with the smallest free generation, writes the header.
bool create_meta(const char* parent_key) {
  for (unsigned gen = 0; gen < 100000; ++gen) {
    LineBuf key(g_proc.key, sizeof g_proc.key);
    key.dec(static_cast<uint64_t>(g_proc.pid)).ch('.').dec(gen);
    LineBuf path(g_proc.meta_path, sizeof g_proc.meta_path);
    path.str(g_proc.dir).ch('/').str(g_proc.key).str(".meta");
    int fd = open_recording_file(g_proc.meta_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                                 g_proc.file_mode);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return false;
    close(fd);
    char buf[8192];
    LineBuf b(buf, sizeof buf);
    b.str("callmon-process 1\nkey ").str(g_proc.key).str("\npid ").dec(g_proc.pid);
    b.str("\nppid ").dec(static_cast<uint64_t>(getppid())).ch('\n');
    if (parent_key) b.str("parent ").str(parent_key).ch('\n');
    b.str("exe ").str(self_exe()).ch('\n');
    b.str("clock ").str(g_clock_fenced ? "tsc-fenced " : g_clock_tsc ? "tsc " : "monotonic ").milli(g_proc.ticks_per_second);
    b.str("\nsync ").dec(read_ticks()).ch(' ').dec(monotonic_ns()).ch('\n');
    if (!filter_on()) put_overhead(b, g_proc.probe);
    g_proc.start_ns = monotonic_ns();
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
    return true;
  }
  return false;
}

// A `HEAD N M` line of two counts, when their sum changed since the last one (`*written`).
void put_count_line(const char* head, unsigned n, unsigned m, unsigned* written) {
  if (n + m == *written) return;
  *written = n + m;
  char line[64];
  LineBuf b(line, sizeof line);
  b.str(head).ch(' ').dec(n).ch(' ').dec(m).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

// The `symbol` lines of library calls not named yet and the `libcall-slots` line
// (got_redirect.hpp) when the pass redirected or refused slots since the last one: after
// the start-up pass and after each dlopen.
unsigned g_libcall_written = ~0u;  // slots counted by the last libcall-slots line
unsigned g_libcall_named = 0;       // library-call names written as symbol lines

void put_libcall_line() {
  unsigned& written = g_libcall_written;
  unsigned& named = g_libcall_named;
  for (uintptr_t fn; named < libcall_name_count(); ++named) {
    const char* name;
    if (!libcall_name(named, &fn, &name)) break;
    char line[512];
    LineBuf b(line, sizeof line);
    // What analysis charges the library-call probe's cost to (docs/format.md); first, so a
    // name too long for the line cannot cut it.
    b.str("libcall-fn ").hex(fn).ch('\n');
    b.str("symbol ").hex(fn).ch(' ').str(name).ch('\n');
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  }
  unsigned n = libcall_slot_count(), r = libcall_refused_count();
  if (n + r != 0) put_count_line("libcall-slots", n, r, &written);
}

// The `xray-sleds` line (xray_sleds.hpp) when the sled passes patched or refused XRay sleds
// since the last one: after the start-up pass and after each dlopen that brought some.
unsigned g_xray_written = 0;

void put_xray_line() {
  put_count_line("xray-sleds", xray_function_count(), xray_refused_count(), &g_xray_written);
}

// The `pg-trampolines` line (mcount_entry.hpp) when the sled pass gave -pg functions
// trampolines or left some since the last one: after the start-up pass and after each dlopen
// of a -pg module.
unsigned g_pg_written = 0;

void put_pg_line() {
  put_count_line("pg-trampolines", mcount_tramp_count(), mcount_left_count(), &g_pg_written);
}

// The `own-unwinder` line (own_unwinder.hpp): what the guard left out, when that grew.
unsigned g_own_written = 0;

void put_own_unwinder_line() {
  unsigned skips = own_unwinder_skips();
  if (skips == g_own_written) return;
  g_own_written = skips;
  char line[80];
  LineBuf b(line, sizeof line);
  b.str("own-unwinder");
  for (const format::OwnUnwinderWord& w : format::kOwnUnwinderWords)
    if (skips & w.bit) b.ch(' ').str(w.word);
  b.ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

int module_callback(dl_phdr_info* info, size_t, void*) {
  char path[PATH_MAX];
  uintptr_t lo = 0, hi = 0;
  if (!module_identity(info, path, sizeof path, &lo, &hi)) return 0;
  uint64_t h = hash_str(path);
  for (unsigned i = 0; i < g_module_count; ++i)
    if (g_modules[i].start == lo && g_modules[i].path_hash == h) return 0;
  if (g_module_count < sizeof g_modules / sizeof g_modules[0]) g_modules[g_module_count++] = {lo, h, true};
  char line[PATH_MAX + 256];
  LineBuf b(line, sizeof line);
  b.str("module ").hex(lo).ch(' ').hex(hi).ch(' ').hex(info->dlpi_addr).ch(' ').str(path).ch('\n');
  // Which file it was: the analysis reads the file later, and a library rebuilt or replaced
  // in between (or between two loads) must be noticed. One write with the module line.
  struct stat st;
  if (stat(path, &st) == 0) {
    b.str("module-file ").dec(st.st_dev).ch(' ').dec(st.st_ino).ch(' ').dec(static_cast<uint64_t>(st.st_size));
    b.ch(' ').dec(static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + static_cast<uint64_t>(st.st_mtim.tv_nsec)).ch('\n');
  }
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  filter_module_found(path, lo, hi, info->dlpi_addr);
  return 0;
}

}  // namespace

void fork_child_handler() {
  RuntimeScope rs;
  context_stash_after_fork();
  thread_setup_retry();  // a set-up that failed in the parent may work in the child
  int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
  // Forked while another thread was setting the process up: that thread does not exist in
  // the child, so nobody would ever finish; the child's first hook starts over.
  if (st == kSettingUp) __atomic_store_n(&g_state, kUnset, __ATOMIC_RELEASE);
  if (st != kOn) return;
  if (recording_sealed()) {
    // The child runs behind its parent's filter: it makes no system call of ours, so it is
    // not recorded, and its inherited thread state, mapped shared with the parent's file,
    // must never be written: stopped for good.
    if (ThreadState* s = t_state) {
      s->guard |= kGuardStopped;
      s->header = nullptr;  // the parent's: not even its lost-event count is the child's
    }
    __atomic_store_n(&g_state, kOff, __ATOMIC_RELEASE);
    return;
  }
  retired_after_fork_child();
  if (monitor_mode()) {  // the child goes on with its copy of the monitor, as itself
    if (ThreadState* s = t_state) monitor_after_fork_child(s);
    return;
  }
  process_after_fork_child();
  if (ThreadState* s = t_state) thread_after_fork_child(s);
}

namespace {

// No recording: a monitor if one was asked for (callmon run, or linked in), else nothing
// at all and the program runs untouched.
bool setup_monitor_locked() {
  if (!monitor_requested()) return false;
  const Options& o = g_proc.options;
  g_proc.pid = getpid();
  g_proc.ticks_per_second = setup_clock(o.clock, parse_double(o.tsc_hz));
  g_proc.max_depth = parse_u64(o.max_depth, 8u << 20);
  if (g_proc.max_depth < 1024) g_proc.max_depth = 1024;
  if (pthread_key_create(&g_thread_key, thread_key_destructor) != 0) return false;
  return monitor_load();
}

bool setup_locked() {
  g_proc.options = read_options();
  const Options& o = g_proc.options;
  if (!o.dir[0]) return setup_monitor_locked();  // not under `callmon record`
  // Absolute, so a program that changes directory keeps writing to the same place.
  char abs_dir[PATH_MAX];
  if (!realpath(o.dir, abs_dir)) {
    char msg[4300];
    LineBuf b(msg, sizeof msg);
    b.str("recording directory ").str(o.dir).str(": ").str(strerror(errno));
    b.str("; the program runs untraced");
    diag(msg);
    return false;
  }
  copy_str(g_proc.dir, sizeof g_proc.dir, abs_dir);
  // Files are as private as their directory (format/file_mode.hpp, docs/security.md):
  // owner read-write, plus the read bits `record --shared` gave the directory.
  struct stat dir_st;
  g_proc.file_mode = 0600u | (stat(g_proc.dir, &dir_st) == 0 ? (dir_st.st_mode & 044u) : 0u);
  g_proc.pid = getpid();
  g_proc.ticks_per_second = setup_clock(o.clock, parse_double(o.tsc_hz));
  uint64_t kib = parse_u64(o.chunk_kib, 4096);
  if (kib < format::kMinChunkSize / 1024) kib = format::kMinChunkSize / 1024;
  if (kib > format::kMaxChunkSize / 1024) kib = format::kMaxChunkSize / 1024;
  g_proc.chunk_size = static_cast<uint32_t>(kib * 1024) & ~4095u;
  g_proc.max_depth = parse_u64(o.max_depth, 8u << 20);
  if (g_proc.max_depth < 1024) g_proc.max_depth = 1024;
  g_proc.record_depth = parse_u64(o.record_depth, 0);
  g_proc.min_ticks = static_cast<uint64_t>(static_cast<double>(parse_u64(o.min_duration_ns, 0)) *
                                           g_proc.ticks_per_second / 1e9);
  g_proc.calib_interval = static_cast<uint64_t>(static_cast<double>(parse_u64(o.calib_ms, 20)) *
                                                g_proc.ticks_per_second / 1e3);
  filter_setup(o.select, nullptr);  // before the calibration, which measures filtered hooks
  // With the name filter, the calibration waits for the filter's table (the first module
  // scan, below): its probes' lookups must cost what the program's do.
  const bool calibrate_after_scan = filter_on();
  if (!calibrate_after_scan) calibrate_at_start();
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&process_setup), &self) && self.dli_fname)
    copy_str(g_proc.self_path, sizeof g_proc.self_path, self.dli_fname);
  if (!create_meta(nullptr)) {
    char msg[4300];
    LineBuf b(msg, sizeof msg);
    b.str("cannot create files in ").str(g_proc.dir).str(": ").str(strerror(errno));
    b.str("; the program runs untraced");
    diag(msg);
    return false;
  }
  // Once per process: a second attach sets recording up again, and two keys would finish
  // a thread's state twice at its exit.
  static bool key_made = false;
  if (!key_made && pthread_key_create(&g_thread_key, thread_key_destructor) != 0) return false;
  key_made = true;
  filter_setup(o.select, g_proc.self_path);
  modules_rescan();
  entry_patch_flush_meta();  // what the start-up pass of --patch refused (entry_patch.hpp)
  if (calibrate_after_scan) {
    calibrate_at_start();
    char line[256];
    LineBuf b(line, sizeof line);
    put_overhead(b, g_proc.probe);
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  }
  return true;
}

}  // namespace

bool process_setup() {
  int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
  if (st == kOn) return true;
  if (st == kOff) return false;
  if (t_in_setup) return false;
  int expected = kUnset;
  if (__atomic_compare_exchange_n(&g_state, &expected, kSettingUp, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    ErrnoSaver es;
    RuntimeScope rs;
    t_in_setup = true;
    bool on = setup_locked();
    t_in_setup = false;
    __atomic_store_n(&g_state, on ? kOn : kOff, __ATOMIC_RELEASE);
    return on;
  }
  // Another thread is setting up; it takes a few microseconds (no calibration when
  // `callmon record` passed the TSC rate).
  while ((st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE)) == kSettingUp) sched_yield();
  return st == kOn;
}

pthread_key_t thread_key() { return g_thread_key; }

void recording_seal(bool strict) {
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != kOn || monitor_mode() || recording_sealed())
    return;
  ErrnoSaver es;
  RuntimeScope rs;
  char line[128];
  LineBuf b(line, sizeof line);
  b.str("sandboxed ").dec(read_ticks()).ch(' ').str(strict ? "seccomp-strict" : "seccomp-filter")
      .ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  char msg[300];
  LineBuf m(msg, sizeof msg);
  m.str("process ").dec(g_proc.pid).str(" installs a seccomp filter: the runtime makes no more "
                                        "system calls in it, so its recording ends as each "
                                        "thread's file fills, and what it starts is not recorded");
  diag(msg);
  // The calling thread, which usually goes on to do the sandboxed work, gets the rest of
  // its chunk now; the other threads' states are theirs to touch.
  if (ThreadState* s = t_state) thread_fill_chunk(s);
  __atomic_store_n(&g_proc.sealed, 1, __ATOMIC_RELEASE);
}

void recording_unseal(int why) {
  if (!recording_sealed()) return;
  __atomic_store_n(&g_proc.sealed, 0, __ATOMIC_RELEASE);
  ErrnoSaver es;
  RuntimeScope rs;
  char line[64];
  LineBuf b(line, sizeof line);
  b.str("unsandboxed ").dec(read_ticks()).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  char msg[200];
  LineBuf m(msg, sizeof msg);
  m.str("process ").dec(g_proc.pid).str(": the kernel refused the seccomp filter (")
      .str(why ? strerrordesc_np(why) : "a thread could not take it")
      .str("): nothing was installed, the recording goes on");
  diag(msg);
}

void meta_append(const char* line, unsigned len) {
  if (recording_sealed()) return;
  int saved = errno;
  int fd = open_recording_file(g_proc.meta_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  int why = errno;
  bool ok = false;
  if (fd >= 0) {
    errno = 0;
    ok = append_to_fd(fd, line, len);
    why = errno;
    close(fd);
  }
  // Said once per process (the pid: a fork child has its own file): a process whose file
  // lacks its lines (a full disk) has names, modules or its clock missing in analysis, or
  // is skipped whole when nothing went in.
  static pid_t reported = 0;
  if (!ok && __atomic_exchange_n(&reported, g_proc.pid, __ATOMIC_RELAXED) != g_proc.pid) {
    char msg[512];
    LineBuf b(msg, sizeof msg);
    b.str("process ").dec(g_proc.pid).str(": cannot write its process file ")
        .str(g_proc.meta_path).str(": ").str(why ? strerrordesc_np(why) : "cut short")
        .str("; what it records from here may not be read");
    diag(msg);
  }
  errno = saved;
}

bool module_identity(const dl_phdr_info* info, char* path, size_t path_size, uintptr_t* lo,
                     uintptr_t* hi) {
  const char* name = info->dlpi_name;
  if (!name || !*name) {
    const char* exe = self_exe();
    if (!*exe || !copy_str(path, path_size, exe)) return false;
  } else if (name[0] != '/') {
    if (path_size < PATH_MAX || !realpath(name, path)) return false;  // the vDSO, or gone
  } else {
    copy_str(path, path_size, name);
  }
  *lo = UINTPTR_MAX;
  *hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t a = info->dlpi_addr + ph.p_vaddr;
    if (a < *lo) *lo = a;
    if (a + ph.p_memsz > *hi) *hi = a + ph.p_memsz;
  }
  return *hi > *lo;
}

void modules_rescan() {
  if (recording_sealed()) return;  // no line can be written, no service asked (recording_seal)
  ErrnoSaver es;
  RuntimeScope rs;  // realpath, dl_iterate_phdr
  // One scan at a time: the loader serialises the callbacks of concurrent scans, but the
  // name filter publishes what a scan found after it (filter_scan_done). Never taken from a
  // signal handler (rescans are not done by nested hooks).
  lock_scan();
  dl_iterate_phdr(module_callback, nullptr);
  for_each_other_namespace_module(module_callback, nullptr);  // dlmopen'ed (namespace_walk.hpp)
  filter_scan_done();
  put_libcall_line();
  put_xray_line();
  put_pg_line();
  put_own_unwinder_line();
  put_other_namespace_lines();  // dlmopen'ed modules not recorded: said
  unlock_scan();
}

namespace {

int presence_callback(dl_phdr_info* info, size_t, void*) {
  char path[PATH_MAX];
  uintptr_t lo = 0, hi = 0;
  bool named = module_identity(info, path, sizeof path, &lo, &hi);
  if (!named) {
    // A relative name whose file is gone (realpath fails): still loaded, matched by its
    // start alone rather than taken for unmapped.
    lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; ++i)
      if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_addr + info->dlpi_phdr[i].p_vaddr < lo)
        lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
  }
  uint64_t h = named ? hash_str(path) : 0;
  for (unsigned i = 0; i < g_module_count; ++i)
    if (g_modules[i].start == lo && (!named || g_modules[i].path_hash == h))
      g_modules[i].present = true;
  return 0;
}

}  // namespace

void modules_before_unload() {
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != kOn || monitor_mode()) return;
  // A module opened since the last scan and not called yet would otherwise leave no line,
  // and calls made in its destructors no name. As handle_rescan (hooks.cpp), which this
  // takes the request from: the new module's sleds first.
  if (take_rescan_request()) {
    sled_patch_modules();
    modules_rescan();
  }
}

void modules_after_unload() {
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != kOn || monitor_mode()) return;
  ErrnoSaver es;
  lock_scan();
  for (unsigned i = 0; i < g_module_count; ++i) g_modules[i].present = false;
  dl_iterate_phdr(presence_callback, nullptr);
  for_each_other_namespace_module(presence_callback, nullptr);
  // Read after the module is gone: every call into it (its destructors included) came
  // before, and a module loaded at its place later gets its own line, written after.
  uint64_t now = read_ticks();
  for (unsigned i = 0; i < g_module_count;) {
    if (g_modules[i].present) {
      ++i;
      continue;
    }
    char line[96];
    LineBuf b(line, sizeof line);
    b.str("module-unmapped ").dec(now).ch(' ').hex(g_modules[i].start).ch('\n');
    meta_append(b.c_str(), static_cast<unsigned>(b.size()));
    filter_module_gone(g_modules[i].start);
    // Forgotten, so that the same file loaded at the same place again gets a new line.
    g_modules[i] = g_modules[--g_module_count];
  }
  filter_scan_done();
  unlock_scan();
}

void request_rescan() { __atomic_store_n(&g_rescan, 1, __ATOMIC_RELEASE); }

bool take_rescan_request() {
  return __atomic_load_n(&g_rescan, __ATOMIC_RELAXED) &&
         __atomic_exchange_n(&g_rescan, 0, __ATOMIC_ACQ_REL);
}

void process_after_fork_child() {
  __atomic_store_n(&g_finished, 0, __ATOMIC_RELAXED);
  char parent[sizeof g_proc.key];
  copy_str(parent, sizeof parent, g_proc.key);
  g_proc.pid = getpid();
  g_module_count = 0;
  g_libcall_written = ~0u;  // the child's meta file says it all again
  g_libcall_named = 0;
  g_xray_written = 0;
  g_pg_written = 0;
  // A thread that was scanning at the fork does not exist here: its lock and half-gathered
  // modules are void.
  g_scan_lock = 0;
  filter_after_fork_child();
  if (!create_meta(parent)) {
    __atomic_store_n(&g_state, kOff, __ATOMIC_RELEASE);
    return;
  }
  entry_patch_after_fork_child();  // the parent's patch-* lines hold here too
  modules_rescan();
}

namespace {

// The start-up calibration sometimes runs in one of the host's slow phases (on this
// project's VM about 1 process in 14: all four of its blocks 20% slow), and then every
// compensated time comes out too low. A process that ran long enough for a second
// calibration's cost not to matter (its CPU time, taken as the start-up one's, under
// 1/kExitCalibrationShare of the process's wall time) measures again at exit and appends
// the result; readers take the cheapest of a meta file's
// calibrations (docs/runtime.md, "Overhead compensation"). After the thread's END, so the
// thread's and the process's recorded ends do not include it.
constexpr uint64_t kExitCalibrationShare = 40;

void recalibrate_at_exit() {
  // The calibration's CPU time, not its wall time: on a loaded machine that includes other
  // processes' turns, which cost this one nothing.
  uint64_t ran = monotonic_ns() - g_proc.start_ns;
  if (g_proc.calibration_cpu_ns == 0 || ran / kExitCalibrationShare < g_proc.calibration_cpu_ns)
    return;
  ProbeCost cost = calibrate_probe_cost(g_pg_hooks);
  if (cost.outer <= 0) return;  // a slow path was taken: no usable records
  calibrate_libcall(cost);
  char line[256];
  LineBuf b(line, sizeof line);
  put_overhead(b, cost);
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
}

}  // namespace

bool process_recording() {
  return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == kOn && !monitor_mode();
}

void process_end_for_attach() {
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != kOn) return;
  char line[128];
  LineBuf b(line, sizeof line);
  uint64_t t = read_ticks(), ns = monotonic_ns();
  b.str("sync ").dec(t).ch(' ').dec(ns).str("\nexit ").dec(t).ch(' ').dec(ns).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  // The next attach writes every module line into its own meta file (lock_scan: a thread
  // stopped inside a scan may hold the table).
  __atomic_store_n(&g_modules_reset, 1, __ATOMIC_RELEASE);
  g_libcall_written = ~0u;  // and its library calls' names and count
  g_libcall_named = 0;
  g_xray_written = 0;  // and its xray-sleds line
  g_pg_written = 0;    // and its pg-trampolines line (the start-up's, an attach makes none)
  __atomic_store_n(&g_state, kUnset, __ATOMIC_RELEASE);
}

void process_reset_for_attach() {
  __atomic_store_n(&g_finished, 0, __ATOMIC_RELAXED);
  thread_setup_retry();  // threads that failed in the last session try again
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == kOff) __atomic_store_n(&g_state, kUnset, __ATOMIC_RELEASE);
}

void process_finish() {
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != kOn) return;
  // Behind a seccomp filter (recording_seal): no exit line, no module lines, no file
  // trimmed. The exiting thread's END still goes into its mapped window, which takes no
  // system call; the other threads' files end where their recordings stopped.
  if (recording_sealed()) {
    if (ThreadState* s = t_state)
      if (!s->header || !(s->header->flags & format::kFlagFinished)) thread_finish(s, true);
    return;
  }
  // A vfork child that ran exit() reaches the destructor on its parent's state: the parent
  // goes on recording and finishes itself (process_finish_rearm).
  if (in_vfork_child()) {
    note_vfork_child_exit();
    return;
  }
  if (__atomic_exchange_n(&g_finished, 1, __ATOMIC_ACQ_REL)) return;
  if (monitor_mode()) {
    monitor_process_finish();
    return;
  }
  ErrnoSaver es;
  RuntimeScope rs;
  modules_rescan();
  char line[128];
  LineBuf b(line, sizeof line);
  uint64_t t = read_ticks(), ns = monotonic_ns();
  b.str("sync ").dec(t).ch(' ').dec(ns).str("\nexit ").dec(t).ch(' ').dec(ns).ch('\n');
  meta_append(b.c_str(), static_cast<unsigned>(b.size()));
  // The process's last thread may have ended by pthread_exit or its start routine's return:
  // its key destructor wrote its END before glibc's exit brought us here.
  if (ThreadState* s = t_state)
    if (!s->header || !(s->header->flags & format::kFlagFinished)) thread_finish(s, true);
  recalibrate_at_exit();
}

}  // namespace callmon::rt
