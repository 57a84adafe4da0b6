// The entry patcher (see entry_patch.hpp). For each module: its functions
// (entry_funcs.hpp), the ones whose name matches CALLMON_PATCH and the record-time name
// filters (sled_select.hpp), the checks that make a patch safe, the trampolines
// (entry_tramp.hpp) and finally the jumps. A module is written only after every
// trampoline of it is complete and sealed, so no jump ever leads to a half-written one.
//
// Concurrency is the sled patcher's (sled_patch.cpp): the start-up pass runs in the
// library's constructor before the program's code has run; after a dlopen the new module's
// code has normally not run yet beyond its constructors. A 5-byte jump inside one aligned
// 8-byte word is written with one store.
//
// Refused (left alone, listed in the meta file with the reason):
// - the program's entry point and gcc's `.cold` parts (entered by jumps: no return
//   address to redirect); FDE-only code whose unwind information does not start with the
//   stack of a function's entry (entry_funcs.cpp);
// - in a module with unwind tables, a symbol no FDE covers: code no compiler made as a
//   function (V8's builtins in node's executable, which V8 copies at run time, patch and
//   all; hand-written code that may leave by any way);
// - at an attach, a function that moves its frame (entry_frame.hpp: libffi's
//   ffi_call_unix64), whose return would outlive the detach;
// - the functions V8's generated code calls through an exit frame, and those they enter by
//   a tail jump (entry_v8.hpp): V8 reads their return addresses when it walks the stack
//   (and at run time, a call from V8's code is left alone: v8_foreign_return);
// - modules built with instrumentation (they import mcount, __fentry__ or
//   __cyg_profile_func_enter, or carry nop-sled lists): their own mode records them;
// - functions shorter than 5 bytes, of unknown size, with a branch into the bytes the jump
//   replaces (a loop at the entry), or whose first instructions cannot be moved
//   (entry_reloc.hpp says which); functions whose displaced bytes a direct branch from
//   anywhere else in the module targets (entry_targets.hpp: one sweep per module).
// Never considered: libcallmon.so, capstone, the vDSO; the dynamic loader and libc are
// refused with a note when CALLMON_PATCH_MODULE names them (the text "ld-linux" or "libc"),
// the unwinder, the C++ runtime and the sanitizers' runtimes whenever it matches them.
#include "runtime/patching/entry_patch.hpp"

#include "runtime/monitor/monitor_dispatch.hpp"

#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/core/libc_regex.hpp"
#include "runtime/core/options.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/patching/attach_collect.hpp"
#include "runtime/patching/attach_meta.hpp"
#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_cfi.hpp"
#include "runtime/patching/entry_decode.hpp"
#include "runtime/patching/entry_frame.hpp"
#include "runtime/patching/entry_funcs.hpp"
#include "runtime/patching/entry_reloc.hpp"
#include "runtime/patching/entry_targets.hpp"
#include "runtime/patching/entry_tramp.hpp"
#include "runtime/patching/entry_v8.hpp"
#include "runtime/patching/own_unwinder.hpp"
#include "runtime/patching/sled_elf.hpp"
#include "runtime/patching/sled_select.hpp"
#include "runtime/patching/tramp_probes.hpp"
#include "runtime/recording/process.hpp"

extern "C" void callmon_patched_entry();       // patch_entry.S
extern "C" void callmon_patched_return_ret();  // patch_entry.S

namespace callmon::rt {

// hooks_pg.cpp: new frames return through the trampoline that keeps every register.
void pg_full_save_returns();

namespace {

bool g_configured = false;
bool g_on = false;
bool g_module_re_on = false;
bool g_loader_ok = false, g_libc_ok = false;
regex_t g_re, g_module_re;
bool g_any = false;
bool g_calibration_done = false;
bool g_decoder_reported = false;

// The pools made so far: a module visited again (after a dlclose, the table of modules
// done is cleared) has entries that jump into one of them already.
constexpr int kMaxPools = 1024;
TrampPool g_pools[kMaxPools];
int g_pool_count = 0;

// The code of the modules with a patched function (entry_patched_code): the library-call
// pass takes them as instrumented.
constexpr int kMaxPatchedCode = 256;
struct CodeRange {
  uintptr_t lo, hi;
};
CodeRange g_patched_code[kMaxPatchedCode];
int g_patched_code_count = 0;

// A V8 embedder's module was patched (entry_v8.hpp): the pass arms the check of return
// addresses.
bool g_v8_module = false;

bool patched_already(uintptr_t site) {
  const auto* c = reinterpret_cast<const uint8_t*>(site);
  if (c[0] != 0xe9) return false;
  int32_t rel;
  memcpy(&rel, c + 1, 4);
  uintptr_t to = site + 5 + static_cast<intptr_t>(rel);
  for (int i = 0; i < g_pool_count; ++i)
    if (to >= reinterpret_cast<uintptr_t>(g_pools[i].base) &&
        to < reinterpret_cast<uintptr_t>(g_pools[i].base) + g_pools[i].size)
      return true;
  return false;
}

// Modules handled (load bias and program headers, as the sled pass keeps them).
struct Done {
  uintptr_t bias;
  const void* phdr;
};
Done g_done[1024];
unsigned g_done_count = 0;
unsigned long long g_subs = 0;

// Meta lines not yet in the meta file (the start-up pass runs before it exists).
constexpr size_t kLogCap = 8u << 20;
char* g_log = nullptr;
size_t g_log_len = 0, g_log_written = 0;
bool g_log_full = false;

// Modules whose lines are written already (never cleared): the table of modules done is
// cleared at each dlclose, and a module still loaded is looked at again then; its lines
// would repeat. (One reloaded at the same place gets its functions patched again, quietly.)
// By path too: another library dlopen'ed where a dlclose'd one was (same bias, and its
// program headers at the same address) is a new module, whose lines are written.
struct Logged {
  uintptr_t bias;
  const void* phdr;
  uint64_t path_hash;
};
Logged g_logged[1024];
unsigned g_logged_count = 0;

uint64_t path_hash(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<uint8_t>(*s)) * 1099511628211ull;
  return h;
}
bool g_quiet = false;

void log_line(const char* line, size_t len) {
  if (g_quiet) return;
  if (!g_log) {
    void* p = mmap(nullptr, kLogCap, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    g_log = static_cast<char*>(p);
  }
  if (g_log_len + len > kLogCap - 64) {
    if (!g_log_full) {
      static const char kMore[] = "patch-refused-truncated\n";
      memcpy(g_log + g_log_len, kMore, sizeof kMore - 1);
      g_log_len += sizeof kMore - 1;
      g_log_full = true;
    }
    return;
  }
  memcpy(g_log + g_log_len, line, len);
  g_log_len += len;
}

void configure() {
  g_configured = true;
  Options o = read_options();
  // A recording's, or a monitor's (callmon trace, run, coverage --patch).
  if ((!o.dir[0] && !monitor_requested()) || !o.patch[0]) return;
  RuntimeScope rs;  // regcomp allocates with the program's malloc
  if (libc_regcomp(&g_re, o.patch, REG_EXTENDED | REG_NOSUB) != 0) {
    diag("--patch: the regular expression does not compile (POSIX extended syntax); nothing patched");
    return;
  }
  if (o.patch_module[0]) {
    if (libc_regcomp(&g_module_re, o.patch_module, REG_EXTENDED | REG_NOSUB) != 0) {
      diag("--patch-module: the regular expression does not compile (POSIX extended syntax); only the executable is patched");
    } else {
      g_module_re_on = true;
      g_loader_ok = strstr(o.patch_module, "ld-linux") != nullptr;
      g_libc_ok = strstr(o.patch_module, "libc") != nullptr;
    }
  }
  g_on = true;
}

bool seen(const dl_phdr_info* info) {
  for (unsigned i = 0; i < g_done_count; ++i)
    if (g_done[i].bias == info->dlpi_addr && g_done[i].phdr == info->dlpi_phdr) return true;
  if (g_done_count < sizeof g_done / sizeof g_done[0])
    g_done[g_done_count++] = {info->dlpi_addr, info->dlpi_phdr};
  return false;
}

const char* base_name(const char* path) {
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

// Whether the module at `path` (empty name: the executable) is one to patch.
bool module_wanted(const dl_phdr_info* info, const char* path) {
  if (!info->dlpi_name || !info->dlpi_name[0]) return true;  // the executable
  // The vDSO has no file (its name has no slash); a module dlopen'ed by a relative path
  // ("./plugin.so") keeps that path as its name, read from the working directory.
  if (!g_module_re_on || !strchr(path, '/')) return false;
  const char* b = base_name(path);
  if (!strncmp(b, "libcapstone", 11)) return false;  // the patcher's own decoder
  // libc and the loader only when named (and then refused with a note, is_own_ground).
  if (!strncmp(b, "ld-linux", 8) && !g_loader_ok) return false;
  if (!strncmp(b, "libc.so", 7) && !g_libc_ok) return false;
  RuntimeScope rs;
  return libc_regmatch(&g_module_re, path);
}

// The unwinder and the C++ runtime: an exception runs through their functions while the
// runtime puts the real return addresses back for the unwinder and closes the frames it
// abandons (interpose_exceptions.cpp); their own frames redirected on top of that lost
// track of a return (a program throwing through them stopped with "a hijacked return
// address is missing"). Left alone, whatever --patch-module says.
bool is_exception_runtime(const char* path) {
  const char* b = base_name(path);
  return !strncmp(b, "libgcc_s", 8) || !strncmp(b, "libstdc++", 9) || !strncmp(b, "libc++", 6) ||
         !strncmp(b, "libunwind", 9);
}

// libc and the dynamic loader: the runtime's hooks and interposers run on them (and
// functions such as clone, vfork, setjmp or the signal-return trampoline must never have
// their return redirected); patched, programs died silently. Refused even when named.
bool is_own_ground(const char* path) {
  const char* b = base_name(path);
  return !strncmp(b, "libc.so", 7) || !strncmp(b, "ld-linux", 8);
}

// A sanitizer's runtime (ASan, TSan, LSan, MSan, HWASan, UBSan): it intercepts the libc
// functions the runtime's probes and set-up call (pthread_setcancelstate, malloc, mmap,
// memcpy), so a patched interceptor re-entered the probe without end (a -fsanitize=thread
// program under --patch-module=. died of SIGSEGV at its first call).
bool is_sanitizer_runtime(const char* path) {
  const char* b = base_name(path);
  for (const char* s : {"libasan", "libtsan", "liblsan", "libmsan", "libhwasan", "libubsan",
                        "libclang_rt."})
    if (!strncmp(b, s, strlen(s))) return true;
  return false;
}

// Why a shared library is never patched, or nullptr.
const char* refused_module(const char* path) {
  if (is_own_ground(path))
    return "libc and the dynamic loader are what the runtime's probes run on (memcpy, mmap, "
           "write, thread and clock functions: a patched one would re-enter the probe), and "
           "clone, vfork, setjmp, the signal return and the lazy-binding resolver must never "
           "have their return redirected: not patched";
  if (is_sanitizer_runtime(path))
    return "a sanitizer's runtime intercepts the libc functions the runtime's probes call "
           "(pthread_setcancelstate, malloc, mmap): a patched interceptor would re-enter the "
           "probe: not patched";
  if (is_exception_runtime(path))
    return "the unwinder or the C++ runtime: the runtime's exception interposers call it "
           "(_Unwind_*, __cxa_get_globals) while they put the real return addresses back, and "
           "a throw through its own redirected frames lost a return: not patched";
  return nullptr;
}

// Functions of the same machinery linked into another module (a static libgcc_eh, libsupc++).
bool is_exception_function(const char* name) {
  return !strncmp(name, "_Unwind_", 8) || !strncmp(name, "__cxa_", 6) ||
         !strncmp(name, "__gxx_personality", 17) || !strncmp(name, "__gcc_personality", 17) ||
         !strncmp(name, "_ZSt9terminate", 14) || !strncmp(name, "__deregister_frame", 18) ||
         !strncmp(name, "__register_frame", 16);
}

bool is_sled(const uint8_t* p) {
  return (p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x44 && p[3] == 0x00) ||
         (p[0] == 0x90 && p[1] == 0x90 && p[2] == 0x90 && p[3] == 0x90 && p[4] == 0x90);
}

bool is_cold_part(const char* name) {
  const char* c = strstr(name, ".cold");
  return c && (c[5] == 0 || c[5] == '.');
}

// Bytes of alignment padding after `f`, up to `want`: nothing starts there (the next
// function of the list begins at or after `want`) and they hold only the bytes compilers
// pad code with (nops of every length, int3). 0 when that is not so.
size_t padding_after(const SledModule& m, const ModuleFunctions& funcs, const EntryFunction& f,
                     uintptr_t want) {
  const uintptr_t end = f.addr + f.size;
  if (want <= end || !in_exec(m, end, want - end)) return 0;
  const EntryFunction* next = &f + 1;
  if (next < funcs.end() && next->addr < want) return 0;
  static const uint8_t kPad[] = {0x90, 0xcc, 0x66, 0x2e, 0x0f, 0x1f, 0x00, 0x40, 0x44, 0x80, 0x84};
  for (uintptr_t a = end; a < want; ++a)
    if (!memchr(kPad, *reinterpret_cast<const uint8_t*>(a), sizeof kPad)) return 0;
  return want - end;
}

// Zeroed pages of its own for `n` bytes (no malloc in the patcher), unmapped at the end
// of the scope; data is null when none could be mapped.
struct ZeroPages {
  explicit ZeroPages(size_t n) : size(n ? n : 1) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  }
  ~ZeroPages() {
    if (data) munmap(data, size);
  }
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;
  size_t size;
  uint8_t* data;
};

struct Pending {
  uintptr_t site;
  uintptr_t slot;
  uintptr_t fn;      // the function's address (its patch-fn line)
  const char* name;  // its symbol (in the module's string table), or null
  Relocated r;       // attach: the instruction boundaries, for threads stopped inside
};

struct ModuleStats {
  unsigned patched = 0, refused = 0;
};

// One `patch-refused` line: address, name (or sub_<link address>), reason.
void refuse(ModuleStats& st, const EntryFunction& f, uintptr_t bias, const char* why,
            uintptr_t detail = 0) {
  ++st.refused;
  char line[1024];
  LineBuf b(line, sizeof line);
  b.str("patch-refused ").hex(f.addr).ch(' ');
  if (f.name) b.str(f.name);
  else b.str("sub_").hex(f.addr - bias);
  b.ch(' ').str(why);
  if (detail) b.str(" (at 0x").hex(detail).str(")");
  b.ch('\n');
  log_line(b.c_str(), b.size());
}

// One `patch-fn` line: the address and name (or sub_<link address>) of a patched function,
// which `callmon coverage` lists (docs/format.md).
void patched_line(const Pending& p, uintptr_t bias) {
  char line[1024];
  LineBuf b(line, sizeof line);
  b.str("patch-fn ").hex(p.fn).ch(' ');
  if (p.name) b.str(p.name);
  else b.str("sub_").hex(p.fn - bias);
  b.ch('\n');
  log_line(b.c_str(), b.size());
}

void module_line(const char* head, const ModuleStats& st, const char* path, const char* note) {
  char line[PATH_MAX + 512];
  LineBuf b(line, sizeof line);
  b.str(head).ch(' ').dec(st.patched).ch(' ').dec(st.refused).ch(' ').str(path);
  if (note) b.str(" ; ").str(note);
  b.ch('\n');
  log_line(b.c_str(), b.size());
}

// The trampolines' CFI (entry_cfi.hpp), registered before any of them can run. libgcc's
// registration allocates with the program's malloc.
bool register_cfi(const TrampPool& pool) {
  RuntimeScope rs;
  return entry_cfi_register(pool);
}

// One `patch-sweep INSNS BYTES NS PATH` line: what the module's sweep for branch targets
// (entry_targets.hpp) decoded and how long it took (docs/format.md).
void sweep_line(const BranchTargets& t, const char* path) {
  char line[PATH_MAX + 128];
  LineBuf b(line, sizeof line);
  b.str("patch-sweep ").dec(t.insns()).ch(' ').dec(t.bytes()).ch(' ').dec(t.nanos()).ch(' ').str(path);
  b.ch('\n');
  log_line(b.c_str(), b.size());
}

// `data`: nullptr, or (entry_patch_module) why the functions of this module of another
// link namespace must not be patched.
int module_callback(dl_phdr_info* info, size_t, void* data) {
  const char* refused_why = static_cast<const char*>(data);
  if (seen(info)) return 0;
  char path[PATH_MAX];
  const char* file = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
  if (file == info->dlpi_name) {
    copy_str(path, sizeof path, file);
  } else {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
  }
  if (!module_wanted(info, path)) return 0;
  g_quiet = false;
  if (refused_why) {
    ModuleStats st;
    module_line("patch-module", st, path, refused_why);
    return 0;
  }
  const uint64_t hash = path_hash(path);
  for (unsigned i = 0; i < g_logged_count && !g_quiet; ++i)
    g_quiet = g_logged[i].bias == info->dlpi_addr && g_logged[i].phdr == info->dlpi_phdr &&
              g_logged[i].path_hash == hash;
  if (!g_quiet && g_logged_count < sizeof g_logged / sizeof g_logged[0])
    g_logged[g_logged_count++] = {info->dlpi_addr, info->dlpi_phdr, hash};
  SledModule m;
  if (!sled_read_module(info, file, &m) || m.exec_count == 0) return 0;
  uintptr_t self = reinterpret_cast<uintptr_t>(&entry_patch_modules);
  for (int i = 0; i < m.exec_count; ++i)
    if (self >= m.exec[i].start && self < m.exec[i].end) return 0;  // libcallmon itself
  ModuleStats st;
  if (info->dlpi_name && info->dlpi_name[0])
    if (const char* why = refused_module(path)) {
      module_line("patch-module", st, path, why);
      return 0;
    }
  ModuleFunctions funcs(info, file);
  if (!funcs.ok()) {
    module_line("patch-module", st, path, funcs.error());
    return 0;
  }
  if (funcs.imported_hook() || m.list_count) {
    char note[128];
    LineBuf b(note, sizeof note);
    if (m.list_count) b.str("built with nop sleds: the sled mode records it");
    else b.str("built with instrumentation (imports ").str(funcs.imported_hook()).str(")");
    module_line("patch-module", st, path, note);
    return 0;
  }
  const char* err;
  {
    RuntimeScope rs;
    err = entry_decoder_error();
  }
  if (err) {
    if (!g_decoder_reported) diag(err);
    g_decoder_reported = true;
    module_line("patch-module", st, path, err);
    return 0;
  }
  sled_select_module(info);
  const uintptr_t bias = info->dlpi_addr;
  // A V8 embedder's functions whose return address V8 reads (entry_v8.hpp); none elsewhere.
  ZeroPages marks(funcs.count());
  if (!marks.data) {
    module_line("patch-module", st, path, "no memory for its function list");
    return 0;
  }
  const uint8_t* v8_marks = mark_v8_entered(funcs, marks.data) ? marks.data : nullptr;
  // Every selected function gets a slot; at most one per function.
  TrampPool pool;
  if (!entry_pool_map(m.exec[0].start, m.exec[m.exec_count - 1].end, funcs.count(),
                      reinterpret_cast<uintptr_t>(&callmon_patched_entry),
                      reinterpret_cast<uintptr_t>(&callmon_patched_return_ret), &pool)) {
    module_line("patch-module", st, path, "no page for trampolines within 2 GiB of its code could be mapped");
    return 0;
  }
  ZeroPages pending_pages(funcs.count() * sizeof(Pending));
  if (!pending_pages.data) {
    entry_pool_seal(&pool);
    return 0;
  }
  auto* pending = reinterpret_cast<Pending*>(pending_pages.data);
  size_t npending = 0;
  BranchTargets targets;  // swept at the first function that gets this far
  bool swept = false, swept_ok = false;
  for (const EntryFunction& f : funcs) {
    char synth[40];
    const char* name = f.name;
    if (!name) {
      LineBuf b(synth, sizeof synth);
      b.str("sub_").hex(f.addr - bias);
      name = synth;
    }
    {
      RuntimeScope rs;
      if (!libc_regmatch(&g_re, name)) continue;
    }
    if (f.addr == funcs.entry_point()) {
      refuse(st, f, bias, "the program's entry point: entered with no return address");
      continue;
    }
    if (f.name && is_exception_function(f.name)) {
      refuse(st, f, bias, "part of the exception machinery (the unwinder, the C++ runtime)");
      continue;
    }
    if (v8_marks && v8_marks[&f - funcs.begin()]) {
      refuse(st, f, bias, "called by V8's generated code, or entered by a tail jump from such "
                          "a function: V8 reads its return address");
      continue;
    }
    if (f.name && is_cold_part(f.name)) {
      refuse(st, f, bias, "the cold part of a split function: entered by a jump");
      continue;
    }
    if (f.size == 0) {
      refuse(st, f, bias, "its size is unknown");
      continue;
    }
    if (funcs.has_unwind_table() && !f.unwound) {
      // Not compiled as a function: V8's builtins (in node's executable) are copied at
      // run time with the patch in them, and hand-written code may leave by any way.
      refuse(st, f, bias, "no unwind information: code no compiler made as a function "
                          "(hand-written or generated, such as V8's builtins)");
      continue;
    }
    if (!in_exec(m, f.addr, f.size)) {
      refuse(st, f, bias, "it lies outside the module's code");
      continue;
    }
    const auto* code = reinterpret_cast<const uint8_t*>(f.addr);
    uintptr_t start = f.addr + (f.size >= 5 && is_endbr64(code) ? 4 : 0);
    size_t avail = f.size - (start - f.addr);
    size_t pad = avail < kPatchJmpLen ? padding_after(m, funcs, f, start + kPatchJmpLen) : 0;
    if (avail + pad < kPatchJmpLen) {
      refuse(st, f, bias, "too short: fewer than 5 bytes, and no padding after it");
      continue;
    }
    if (patched_already(start)) continue;
    if (is_sled(reinterpret_cast<const uint8_t*>(start))) {
      refuse(st, f, bias, "it starts with a nop sled (the sled mode's)");
      continue;
    }
    if (attach_collecting() && entry_moves_frame(reinterpret_cast<const uint8_t*>(start), avail)) {
      refuse(st, f, bias, "it moves its frame (hand-written code, as libffi's ffi_call_unix64): "
                          "its return would outlive the detach");
      continue;
    }
    if (!sled_select(f.addr)) continue;  // --include/--exclude
    uint8_t* slot = entry_pool_next(pool);
    if (!slot) break;
    Relocated r;
    uintptr_t to = reinterpret_cast<uintptr_t>(slot) + kTrampCodeOffset;
    if (const char* why = entry_relocate(reinterpret_cast<const uint8_t*>(start), avail, start, to, &r, pad)) {
      refuse(st, f, bias, why);
      continue;
    }
    if (!swept) {
      swept = true;
      swept_ok = targets.build(m, funcs);
    }
    if (!swept_ok) {
      refuse(st, f, bias, "no memory for the sweep of the module's branch targets");
      continue;
    }
    // The sweep saw every direct branch of the module, the function's own among them;
    // only for the reason is the function decoded again (capstone with operand details,
    // ten times the sweep's cost: node's whole code took a second).
    if (uintptr_t at = targets.hit(start + 1, start + r.displaced)) {
      if (uintptr_t own = entry_branch_into(code, f.size, f.addr, start + 1, start + r.displaced))
        refuse(st, f, bias, "a branch jumps into the bytes the patch replaces", own);
      else
        refuse(st, f, bias,
               "a branch from elsewhere in the module (another function, a shared block, an "
               "assembly label) lands inside the bytes the patch replaces", at);
      continue;
    }
    entry_pool_take(&pool, f.addr, !attach_collecting(), r.code, r.len);
    pending[npending++] = {start, reinterpret_cast<uintptr_t>(slot), f.addr, f.name, r};
  }
  const char* note = nullptr;
  if (npending) {
    const bool attach = attach_collecting();  // listed for `record -p`, written by it
    if (!entry_pool_seal(&pool)) note = "its trampolines cannot be made executable (mprotect refused)";
    else if (!attach && !set_code_writable(m, true, false)) note = "its code cannot be made writable (mprotect refused)";
    if (note) {
      st.refused += static_cast<unsigned>(npending);
    } else {
      if (!register_cfi(pool))
        note = "patched, but its trampolines have no unwind information (libgcc_s.so.1 or its "
               "__register_frame missing): an unwinder stops at a pc inside one";
      pg_full_save_returns();  // before the first patched function can run
      if (attach) {
        for (size_t i = 0; i < npending; ++i)
          if (attach_list_entry(pending[i].site, pending[i].slot + kTrampEntry,
                                pending[i].slot + kTrampCodeOffset, pending[i].r)) {
            ++st.patched;
            patched_line(pending[i], bias);
          } else {
            ++st.refused;
          }
      } else {
        for (size_t i = 0; i < npending; ++i) write_rel32(pending[i].site, 0xe9, pending[i].slot + kTrampEntry);
        set_code_writable(m, false, false);
        st.patched = static_cast<unsigned>(npending);
        for (size_t i = 0; i < npending; ++i) patched_line(pending[i], bias);
      }
      g_any = true;
      if (g_pool_count < kMaxPools) g_pools[g_pool_count++] = pool;
      v8_note_code(reinterpret_cast<uintptr_t>(pool.base),
                   reinterpret_cast<uintptr_t>(pool.base) + pool.size);
      if (v8_marks) g_v8_module = true;
      for (int i = 0; i < m.exec_count && g_patched_code_count < kMaxPatchedCode; ++i)
        g_patched_code[g_patched_code_count++] = {m.exec[i].start, m.exec[i].end};
    }
  } else {
    entry_pool_seal(&pool);  // unmaps the unused pool
  }
  if (swept) sweep_line(targets, path);
  module_line("patch-module", st, path, note);
  return 0;
}

}  // namespace

void entry_patch_modules() {
  if (!g_configured) configure();
  if (!g_on) return;
  if (own_unwinder_blocks_returns()) {
    own_unwinder_skipped(kSkipPatch);
    return;
  }
  unsigned long long subs = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    *static_cast<unsigned long long*>(p) = info->dlpi_subs;
    return 1;
  }, &subs);
  if (subs != g_subs) {
    g_done_count = 0;  // a dlclose: addresses may be reused (as in sled_patch.cpp)
    g_patched_code_count = 0;  // the modules still loaded are looked at again
    g_subs = subs;
  }
  dl_iterate_phdr(module_callback, nullptr);
  if (g_v8_module) v8_arm();  // outside the loader's iteration (it iterates again)
  if (g_any && !g_calibration_done) {
    g_calibration_done = true;
    tramp_calibration_probes(reinterpret_cast<uintptr_t>(&callmon_patched_entry),
                             reinterpret_cast<uintptr_t>(&callmon_patched_return_ret));
  }
  // An attach's lines go to its own meta file, made after this pass (process_setup).
  if (g_proc.meta_path[0] && !attach_collecting()) entry_patch_flush_meta();
}

bool entry_patch_module(dl_phdr_info* info, const char* refuse) {
  if (!g_configured) configure();
  if (!g_on) return false;
  module_callback(info, sizeof *info, const_cast<char*>(refuse));
  return true;
}

void entry_patch_namespaces_done() {
  if (g_on && g_proc.meta_path[0] && !attach_collecting()) entry_patch_flush_meta();
}

void entry_patch_attach_pass() {
  // Each attach reads its own options and writes its own meta file; the modules patched by
  // the last one were put back by its detach. The trampolines stay mapped (a thread may
  // still be in one, or return through a frame it entered).
  if (g_on) {
    RuntimeScope rs;
    libc_regfree(&g_re);
    if (g_module_re_on) libc_regfree(&g_module_re);
  }
  g_configured = g_on = g_module_re_on = g_loader_ok = g_libc_ok = false;
  g_done_count = 0;
  g_patched_code_count = 0;
  g_logged_count = 0;
  g_log_len = g_log_written = 0;
  g_log_full = false;
  entry_patch_modules();
}

namespace {
bool g_hold_meta = false;  // attach_meta.hpp: an attach's lines wait for its stop
}  // namespace

void entry_patch_hold_meta(bool hold) { __atomic_store_n(&g_hold_meta, hold, __ATOMIC_RELEASE); }

void entry_patch_drop_patched(const uint64_t* sites, unsigned n, const char* why) {
  if (!g_log || g_log_written == g_log_len) return;
  // Each rewritten line grows by the reason's length; the log's spare room is most of it.
  const size_t pending = g_log_len - g_log_written;
  const size_t cap = pending + n * (strlen(why) + 32);
  void* tmp = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (tmp == MAP_FAILED) return;
  const size_t len = attach_meta_drop(g_log + g_log_written, pending, sites, n, why,
                                      static_cast<char*>(tmp), cap);
  if (len != SIZE_MAX && g_log_written + len <= kLogCap) {
    memcpy(g_log + g_log_written, tmp, len);
    g_log_len = g_log_written + len;
  }
  munmap(tmp, cap);
}

void entry_patch_flush_meta() {
  if (__atomic_load_n(&g_hold_meta, __ATOMIC_ACQUIRE)) return;
  if (!g_log || g_log_written == g_log_len || !g_proc.meta_path[0]) return;
  meta_append(g_log + g_log_written, static_cast<unsigned>(g_log_len - g_log_written));
  g_log_written = g_log_len;
}

void entry_patch_after_fork_child() {
  g_log_written = 0;
  entry_patch_flush_meta();
}

bool entry_patched_any() { return g_any; }

bool entry_patched_code(uintptr_t lo, uintptr_t hi) {
  for (int i = 0; i < g_patched_code_count; ++i)
    if (lo < g_patched_code[i].hi && g_patched_code[i].lo < hi) return true;
  return false;
}

}  // namespace callmon::rt
