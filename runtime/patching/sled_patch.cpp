// The nop-sled patcher (see sled_patch.hpp): finds each module's sled list (sled_elf.hpp),
// checks every site, and writes `jmp rel32` to the function's stub in a pool mapped near the
// module (sled_call_stub.hpp), which calls the function; where no pool can be had, `call
// rel32` to the -pg entry trampoline __fentry__ (arch/x86_64/pg_entry.S), through a stub
// page (sled_stub.hpp) when the trampoline is out of rel32 reach. The same pass patches
// clang's XRay sleds (xray_sleds.hpp).
//
// Concurrency. A 5-byte nop becoming a 5-byte call is not one atomic change for a CPU
// that may be executing it: a thread fetching the site while it is rewritten could see
// half of each; worse, gcc's -fpatchable-function-entry sled is five 1-byte nops, and a
// thread stopped between two of them would resume in the middle of the call's
// displacement. The one pass at start-up runs in libcallmon's constructor, before the
// executable's constructors and main, so before the program has threads (unless a shared
// library's constructor, which the loader runs before ours, started one): nothing
// executes the sites. After a dlopen the new module's sites are patched before the first dlsym
// returns (or at the next hook of the thread that called dlopen); its code has normally
// not run yet, except its own constructors (they ran inside dlopen, unpatched and
// unrecorded) and any thread they started. To narrow that window a site inside one
// aligned 8-byte word is written with a single 8-byte store, which instruction fetch sees
// whole on the CPUs we know (the SDM's cross-modifying-code protocol, which would stop the
// other threads, is not followed); the others are written byte by byte. The segment is made writable *and*
// executable while it is patched so code on the same pages keeps running.
#include "runtime/patching/sled_patch.hpp"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/calibration/calibration.hpp"
#include "runtime/core/options.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/patching/got_redirect.hpp"
#include "runtime/patching/attach_dlopen.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_patch.hpp"
#include "runtime/patching/fentry_sites.hpp"
#include "runtime/patching/mcount_entry.hpp"
#include "runtime/patching/namespace_patch.hpp"
#include "runtime/patching/own_unwinder.hpp"
#include "runtime/patching/sled_elf.hpp"
#include "runtime/patching/sled_entry_check.hpp"
#include "runtime/patching/sled_select.hpp"
#include "runtime/patching/sled_call_stub.hpp"
#include "runtime/patching/sled_stub.hpp"
#include "runtime/patching/xray_sleds.hpp"
#include "runtime/core/sys.hpp"

extern "C" void __fentry__();  // pg_entry.S

namespace callmon::rt {

namespace {

int g_lock = 0;
bool g_any = false;
bool g_startup = true;  // the first pass: no other thread yet

// Modules handled already, by load bias and program header address. A dlclose clears the
// table (dlpi_subs changes): a module loaded again at the same place has fresh nops, and
// sites patched before are recognised as such (SiteKind::kOurs) by the next pass.
struct Done {
  uintptr_t bias;
  const void* phdr;
};
Done g_done[1024];
unsigned g_done_count = 0;
unsigned long long g_subs = 0;

struct Stats {
  unsigned patched, ours, refused, unselected, outside, misplaced;
  uintptr_t first_refused, first_misplaced;
  uint8_t refused_bytes[5];
  const char* failure;  // why nothing could be patched, or nullptr
};

enum class SiteKind { kNop, kOurs, kOther };

// A site to write once the module's pool is executable: `op` (e8 call, e9 jmp) rel32 to `to`.
struct Write {
  uintptr_t site;
  uintptr_t to;
  uint8_t op;
};

// The writes of one module's pass, in memory mapped for it (a module may have 10^5 sites).
struct Writes {
  Write* w = nullptr;
  size_t count = 0, cap = 0;
  bool reserve(size_t n) {
    if (n == 0) return true;
    void* p = mmap(nullptr, n * sizeof(Write), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    w = static_cast<Write*>(p);
    cap = n;
    return true;
  }
  ~Writes() {
    if (w) munmap(w, cap * sizeof(Write));
  }
};

uintptr_t trampoline() { return reinterpret_cast<uintptr_t>(&__fentry__); }

SiteKind classify(const uint8_t* b, uintptr_t site) {
  // 0f 1f 44 00 xx: nopl disp8(%rax,%rax,1), any displacement (clang writes 08).
  if (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0x00) return SiteKind::kNop;
  if (b[0] == 0x90 && b[1] == 0x90 && b[2] == 0x90 && b[3] == 0x90 && b[4] == 0x90)
    return SiteKind::kNop;  // gcc's -fpatchable-function-entry=5
  if (b[0] == 0xe8 || b[0] == 0xe9) {
    int32_t rel;
    memcpy(&rel, b + 1, 4);
    uintptr_t to = site + 5 + static_cast<intptr_t>(rel);
    if (b[0] == 0xe8 ? to == trampoline() || sled_is_stub(to) : sled_stub_start(to))
      return SiteKind::kOurs;
  }
  return SiteKind::kOther;
}

const ExecSegment* segment_of(const SledModule& m, uintptr_t site) {
  for (int i = 0; i < m.exec_count; ++i)
    if (site >= m.exec[i].start && site + 5 <= m.exec[i].end) return &m.exec[i];
  return nullptr;
}

// The function's first byte: the site, or the endbr64 in front of it (-fcf-protection).
uintptr_t function_start(const SledModule& m, uintptr_t site) {
  const ExecSegment* seg = segment_of(m, site);
  if (seg && site >= seg->start + 4 && is_endbr64(reinterpret_cast<const uint8_t*>(site - 4)))
    return site - 4;
  return site;
}

// `call __fentry__` for the site, through a stub page when out of reach; 0 (and st->failure)
// when no stub page can be mapped.
uintptr_t fentry_target(const SledModule& m, uintptr_t site, Stats* st, uintptr_t* stub) {
  uintptr_t to = trampoline();
  if (rel32_reaches(site + 5, to)) return to;
  if (!*stub) *stub = sled_stub_near(m.exec[0].start, m.exec[m.exec_count - 1].end, to);
  if (!*stub) st->failure = "no page for a stub within 2 GiB of the module could be mapped";
  return *stub;
}

// Checks the list's sites and queues a write for each one to patch: a jump to its stub in
// `pool` when it is open, else a call of __fentry__.
void patch_list(const SledModule& m, const SledList& list, uintptr_t bias,
                const EntryCheck& entries, Stats* st, SledPool* pool, uintptr_t* stub,
                Writes* out) {
  for (size_t i = 0; i < list.count && !st->failure; ++i) {
    uintptr_t site = list.entries[i];
    // Run-time addresses once relocated; an entry the loader did not relocate (a PIE
    // module's list without dynamic relocations) is a link-time one. 0: a discarded
    // function (linker garbage collection, a dropped COMDAT copy).
    if (!segment_of(m, site)) site += bias;
    if (list.entries[i] == 0 || !segment_of(m, site)) {
      ++st->outside;
      continue;
    }
    auto* bytes = reinterpret_cast<const uint8_t*>(site);
    SiteKind kind = classify(bytes, site);
    if (kind == SiteKind::kOurs) {
      ++st->ours;
      continue;
    }
    if (kind == SiteKind::kOther) {
      if (st->refused++ == 0) {
        st->first_refused = site;
        memcpy(st->refused_bytes, bytes, 5);
      }
      continue;
    }
    uintptr_t fn = function_start(m, site);
    if (!entries.known() || entries.where(fn) != EntryCheck::Where::kStart) {
      // Nops, but not at an entry (-fpatchable-function-entry=N,M with M > 0), or nothing
      // to confirm it (code without unwind tables): a call there could run into the
      // function's first instruction.
      if (st->misplaced++ == 0) st->first_misplaced = site;
      continue;
    }
    if (!sled_select(fn)) {
      ++st->unselected;
      continue;
    }
    if (uintptr_t s = sled_pool_stub(pool, site, site + 5)) {
      out->w[out->count++] = {site, s, 0xe9};
    } else if (uintptr_t to = fentry_target(m, site, st, stub)) {
      out->w[out->count++] = {site, to, 0xe8};
    }
  }
}

// Writes the queued sites. A pool that could not be made executable sends its sites to
// __fentry__ instead.
void write_sites(const SledModule& m, Writes* ws, bool pool_ok, Stats* st, uintptr_t* stub,
                 bool* writable) {
  for (size_t i = 0; i < ws->count && !st->failure; ++i) {
    Write w = ws->w[i];
    if (w.op == 0xe9 && !pool_ok) {
      w.op = 0xe8;
      if (!(w.to = fentry_target(m, w.site, st, stub))) return;
    }
    if (!*writable) {
      if (!set_code_writable(m, true, g_startup)) {
        st->failure = "its code cannot be made writable (mprotect refused)";
        return;
      }
      *writable = true;
    }
    write_rel32(w.site, w.op, w.to);
    ++st->patched;
    if (w.op == 0xe9) g_sled_stubs = true;
  }
}

// A -pg -mfentry module's calls of __fentry__ become jumps to stubs that call their
// functions (fentry_sites.hpp), like nop sleds. Where no pool can be had or the code cannot
// be written they stay calls, recorded through the redirected return: nothing to report.
// Never a call written where a stub was meant: a 6-byte `call *GOT` site must not become a
// 5-byte call followed by the old instruction's last byte.
void patch_fentry_module(const dl_phdr_info* info, const char* path, const SledModule& m) {
  FentrySites fs(info, path, m);
  Writes ws;
  SledPool pool;
  if (!fs.count() || !ws.reserve(fs.count()) ||
      !sled_pool_open(&pool, m.exec[0].start, m.exec[m.exec_count - 1].end, fs.count()))
    return;
  for (size_t i = 0; i < fs.count(); ++i)
    if (uintptr_t s = sled_pool_stub(&pool, fs[i].site, fs[i].site + fs[i].length))
      ws.w[ws.count++] = {fs[i].site, s, 0xe9};
  if (!sled_pool_close(&pool)) return;
  Stats st{};
  bool writable = false;
  uintptr_t stub = 0;
  write_sites(m, &ws, true, &st, &stub, &writable);
  if (writable) set_code_writable(m, false, g_startup);
}

void report(const char* path, const Stats& st) {
  char msg[PATH_MAX + 256];
  LineBuf b(msg, sizeof msg);
  b.str(path).str(": ");
  if (st.failure) {
    b.str("nop sleds not patched, ").str(st.failure).str("; its functions are not recorded");
  } else {
    if (st.refused) {
      b.dec(st.refused).str(" sled site(s) do not hold the expected nop (first at ");
      b.str("0x").hex(st.first_refused).str(":");
      static const char kHex[] = "0123456789abcdef";
      for (uint8_t v : st.refused_bytes) b.ch(' ').ch(kHex[v >> 4]).ch(kHex[v & 15]);
      b.str(")");
    }
    if (st.misplaced) {
      b.str(st.refused ? ", " : "").dec(st.misplaced);
      b.str(" sled site(s) are not function entries by the unwind tables (first at 0x");
      b.hex(st.first_misplaced).str("; -fpatchable-function-entry=N,M needs M = 0, and the");
      b.str(" code unwind tables)");
    }
    b.str("; left unpatched, those functions are not recorded");
  }
  diag(msg);
}

// Patches the module's XRay sleds and says on stderr what it had to leave.
void xray_report(const char* path, const dl_phdr_info* info, const SledModule& m) {
  XrayPatchStats xs{};
  xray_patch_module(m, g_startup, &xs);
  if (!xs.refused && !xs.failure) return;
  char exe[PATH_MAX];
  ssize_t n = path == info->dlpi_name ? -1 : readlink(path, exe, sizeof exe - 1);
  if (n > 0) exe[n] = 0;
  char msg[PATH_MAX + 256];
  LineBuf b(msg, sizeof msg);
  b.str(n > 0 ? exe : path).str(": ");
  if (xs.failure) {
    b.str("XRay sleds not all patched, ").str(xs.failure);
  } else {
    b.dec(xs.refused).str(" XRay sled(s) hold unknown bytes (first at 0x");
    b.hex(xs.first_refused).ch(')');
  }
  b.str("; those functions are not recorded");
  diag(msg);
}

// The -pg calibration's probe functions get stubs too once the program's sleds have, so the
// calibration measures the stubs' path (calibration_probe_pg.cpp). Their `call __fentry__`
// (5 or 6 bytes) becomes the jump to the stub, which calls the code after it. Where
// anything fails they stay as they are (the calibration then measures the -pg entry's
// redirected return, a few ns per call more).
void patch_calibration_probes() {
  static bool done = false;
  if (done || !g_sled_stubs) return;
  done = true;
  constexpr size_t kCount = 8;
  PgProbeSite probes[kCount];
  uintptr_t stubs[kCount];
  size_t count = pg_calibration_sites(trampoline(), probes, kCount), n = 0;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (size_t i = 0; i < count; ++i) {
    if (probes[i].site < lo) lo = probes[i].site;
    if (probes[i].site > hi) hi = probes[i].site;
  }
  SledPool pool;
  if (!count || !sled_pool_open(&pool, lo, hi + 16, count)) return;
  for (; n < count; ++n)
    if (!(stubs[n] = sled_pool_stub(&pool, probes[n].fn, probes[n].site + probes[n].len))) break;
  if (!sled_pool_close(&pool)) return;
  for (size_t i = 0; i < n; ++i) write_rel32_text(probes[i].site, 0xe9, stubs[i]);
}

bool seen(const dl_phdr_info* info) {
  for (unsigned i = 0; i < g_done_count; ++i)
    if (g_done[i].bias == info->dlpi_addr && g_done[i].phdr == info->dlpi_phdr) return true;
  if (g_done_count < sizeof g_done / sizeof g_done[0])
    g_done[g_done_count++] = {info->dlpi_addr, info->dlpi_phdr};
  return false;
}

// One module's sleds (module_callback; sled_patch_module for other namespaces). The nop-sled
// lists only when `lists`; XRay sleds always. Returns sled_patch_module's flags.
unsigned patch_module(dl_phdr_info* info, bool lists) {
  if (seen(info)) return 0;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
  SledModule m;
  if (!sled_read_module(info, path, &m) || m.exec_count == 0) return 0;
  uintptr_t self = reinterpret_cast<uintptr_t>(&sled_patch_modules);
  for (int i = 0; i < m.exec_count; ++i)
    if (self >= m.exec[i].start && self < m.exec[i].end) return 0;  // libcallmon itself
  // The executable comes first in the loader's list: found there, no module of the
  // program gets a changed return (own_unwinder.hpp).
  own_unwinder_guard(m, path != info->dlpi_name, path);
  if (m.imports_pg) {
    // A -pg build: its listed sites hold calls already, for the -pg hooks. Those of
    // __fentry__ get stubs, functions calling mcount trampolines (mcount_entry.hpp), but
    // not in another link namespace (`lists` false), nor for a monitor, whose callbacks
    // may act on the hook's own frame (callmon inject's throw and return: docs/inject.md).
    if (lists && !monitor_requested()) {
      patch_fentry_module(info, path, m);
      mcount_patch_module(info, path, m);
    }
    m.list_count = 0;
  }
  if (m.list_count == 0 && !m.xray_map) return 0;
  sled_select_module(info);
  Stats st{};
  bool writable = false;
  uintptr_t stub = 0;
  EntryCheck entries(info);
  unsigned flags = (m.list_count ? kSledLists : 0u) | (m.xray_map ? kSledXray : 0u);
  if (!lists) m.list_count = 0;
  size_t sites = 0;
  for (int i = 0; i < m.list_count; ++i) sites += m.lists[i].count;
  Writes ws;
  SledPool pool;
  if (sites && !ws.reserve(sites)) {
    st.failure = "no memory for the list of its sites";
  } else if (sites) {
    // The stubs: a pool near the module's code (none: the sites call __fentry__).
    sled_pool_open(&pool, m.exec[0].start, m.exec[m.exec_count - 1].end, sites);
    for (int i = 0; i < m.list_count; ++i)
      patch_list(m, m.lists[i], info->dlpi_addr, entries, &st, &pool, &stub, &ws);
    write_sites(m, &ws, sled_pool_close(&pool), &st, &stub, &writable);
  }
  if (writable) set_code_writable(m, false, g_startup);
  if (m.xray_map) xray_report(path, info, m);  // clang -fxray-instrument (xray_sleds.hpp)
  if (st.patched) g_any = true;
  if (st.refused || st.misplaced || st.failure) {
    char exe[PATH_MAX];
    ssize_t n = path == info->dlpi_name ? -1 : readlink(path, exe, sizeof exe - 1);
    if (n > 0) exe[n] = 0;
    report(n > 0 ? exe : path, st);
  }
  return flags;
}

int module_callback(dl_phdr_info* info, size_t, void*) {
  patch_module(info, true);
  return 0;
}

}  // namespace

void sled_patch_modules() {
  // Behind a seccomp filter no code is patched (mprotect; recording_seal): a module loaded
  // then keeps its nops, unrecorded.
  if (recording_sealed()) return;
  const char* dir = read_options().dir;
  const bool recording = dir && dir[0];
  // Neither recording nor a monitor's (trace, run, inject, coverage): the nops stay, the
  // program runs natively.
  if (!recording && !monitor_requested()) return;
  // A recording directory that cannot be written: the set-up will say so and leave the
  // program untraced, so it should keep its native speed too.
  if (recording && access(dir, W_OK | X_OK) != 0) {
    // The set-up fails the same way and says so, once: a process whose only hooks are
    // sleds would otherwise never get to it.
    if (g_startup) process_setup();
    g_startup = false;
    return;
  }
  ErrnoSaver es;
  while (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  static bool atfork_set = false;
  if (!atfork_set) {
    // A fork while another thread holds the lock: that thread does not exist in the child,
    // which would wait forever at its next pass.
    atfork_set = true;
    pthread_atfork(nullptr, nullptr, [] { __atomic_store_n(&g_lock, 0, __ATOMIC_RELAXED); });
  }
  if (attach_session() != 0) {  // `record -p`: the attach's own pass (attach_dlopen.hpp)
    attach_dl_pass();
    __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
    return;
  }
  // A dlclose since the last pass: module addresses may be reused (see Done).
  unsigned long long subs = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    *static_cast<unsigned long long*>(p) = info->dlpi_subs;
    return 1;
  }, &subs);
  if (subs != g_subs) {
    g_done_count = 0;
    g_subs = subs;
  }
  dl_iterate_phdr(module_callback, nullptr);
  patch_calibration_probes();  // after the modules: only once a stub was made
  mcount_patch_calibration_probes();  // likewise once a trampoline was
  entry_patch_modules();  // --patch (entry_patch.hpp): same moments, same lock
  // A monitor gets the calls of the compiler's probes, sleds and --patch'ed functions: no
  // library calls (record's), no other namespaces.
  if (recording) {
    // Calls into other modules (got_redirect.hpp), same occasions; after the entry pass,
    // whose patched modules it takes as instrumented.
    libcall_patch_modules();
    // Modules dlmopen'ed into other namespaces (namespace_patch.hpp), after the base's.
    namespace_patch_modules();
  }
  if (g_any || entry_patched_any()) g_pg_hooks = true;  // the first hook will be a -pg one: calibrate those
  own_unwinder_say();
  g_startup = false;
  __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
}

bool sled_patched_any() { return g_any; }

bool sled_patch_attach_try() {
  if (attach_session() == 0) return true;
  // The thread the tool called into may have been stopped holding either lock (a pass of
  // its own, a dlclose's prune blocked in the loader's lock): waiting would be waiting for
  // itself. Busy instead; the tool comes back later.
  if (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) return false;
  const bool idle = attach_dl_idle();
  if (idle) attach_dl_pass();
  __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
  return idle;
}

unsigned sled_patch_module(dl_phdr_info* info, bool lists) { return patch_module(info, lists); }

int g_sled_pass_pending = 0;

void sled_request_pass() { __atomic_store_n(&g_sled_pass_pending, 1, __ATOMIC_RELEASE); }

void sled_patch_pending() {
  if (__atomic_load_n(&g_sled_pass_pending, __ATOMIC_ACQUIRE) &&
      __atomic_exchange_n(&g_sled_pass_pending, 0, __ATOMIC_ACQ_REL))
    sled_patch_modules();
}

}  // namespace callmon::rt
