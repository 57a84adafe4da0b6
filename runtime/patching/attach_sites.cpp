// Attach: listing the sled sites and GOT words to patch (see attach_sites.hpp). The sled
// checks are sled_patch.cpp's (a known nop encoding, at a function entry by the unwind
// tables); here nothing is written.
#include "runtime/patching/attach_sites.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/interposers/interpose.hpp"
#include "runtime/patching/attach_collect.hpp"
#include "runtime/patching/attach_dlopen.hpp"
#include "runtime/patching/attach_pins.hpp"
#include "runtime/patching/entry_patch.hpp"
#include "runtime/patching/got_redirect.hpp"
#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/sled_elf.hpp"
#include "runtime/patching/sled_select.hpp"
#include "runtime/patching/sled_entry_check.hpp"
#include "runtime/patching/sled_stub.hpp"
#include "runtime/patching/xray_sleds.hpp"

namespace callmon::rt {

namespace {

// The runtime's own mcount, __fentry__ (arch/x86_64/pg_entry.S) and
// __cyg_profile_func_enter/exit (cyg_hooks.S). Loaded by dlopen, the runtime is not first in
// the program's symbol search order: `&__fentry__` in its code, like its own calls, binds
// to glibc's. dlsym on its own handle searches it first.
struct OwnHooks {
  uintptr_t mcount, fentry, cyg_enter, cyg_exit;
};
OwnHooks g_own;

void find_interposers(void* self);

bool find_own_hooks() {
  Dl_info self;
  if (!dladdr(reinterpret_cast<void*>(&attach_collect_sites), &self) || !self.dli_fname) return false;
  void* h = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return false;
  g_own.mcount = reinterpret_cast<uintptr_t>(dlsym(h, "mcount"));
  g_own.fentry = reinterpret_cast<uintptr_t>(dlsym(h, "__fentry__"));
  g_own.cyg_enter = reinterpret_cast<uintptr_t>(dlsym(h, "__cyg_profile_func_enter"));
  g_own.cyg_exit = reinterpret_cast<uintptr_t>(dlsym(h, "__cyg_profile_func_exit"));
  find_interposers(h);
  attach_dl_find_wrappers(h);
  dlclose(h);  // only drops the reference RTLD_NOLOAD took
  return g_own.mcount && g_own.fentry && g_own.cyg_enter && g_own.cyg_exit;
}

// The runtime's interposers of what walks or cuts the stack (interpose_exceptions.cpp,
// interpose_pg.cpp), of fork (interpose_process.cpp), of ucontext switches
// (interpose_context.cpp), of signal handlers' installation (interpose_signal.cpp), of
// vfork and of exit. Preloaded, they take the place of the unwinder's and libc's functions;
// loaded by dlopen they take nobody's: without them the first exception thrown through a
// call whose return address the -pg hooks redirected would end the program (std::terminate),
// so while attached the GOT words bound to these functions get the runtime's, as the hooks'
// do. Each calls the real function, found in the global scope (the runtime's own RTLD_NEXT
// search covers only its own dependencies, not libgcc_s).
struct Interposed {
  const char* name;
  void** real;   // its g_real slot; nullptr: the interposer finds the real one itself
  uintptr_t own;  // the runtime's interposer; 0: not redirected
};
Interposed g_interposed[] = {
    {"_Unwind_RaiseException", reinterpret_cast<void**>(&g_real.raise_exception), 0},
    {"_Unwind_Resume_or_Rethrow", reinterpret_cast<void**>(&g_real.resume_or_rethrow), 0},
    {"_Unwind_ForcedUnwind", reinterpret_cast<void**>(&g_real.forced_unwind), 0},
    {"_Unwind_SetIP", reinterpret_cast<void**>(&g_real.set_ip), 0},
    {"_Unwind_Resume", reinterpret_cast<void**>(&g_real.resume), 0},
    {"__cxa_begin_catch", reinterpret_cast<void**>(&g_real.begin_catch), 0},
    {"longjmp", reinterpret_cast<void**>(&g_real.longjmp_), 0},
    {"_longjmp", reinterpret_cast<void**>(&g_real.under_longjmp), 0},
    {"siglongjmp", reinterpret_cast<void**>(&g_real.siglongjmp_), 0},
    {"__longjmp_chk", reinterpret_cast<void**>(&g_real.longjmp_chk), 0},
    {"backtrace", reinterpret_cast<void**>(&g_real.backtrace_), 0},
    {"_Unwind_Backtrace", reinterpret_cast<void**>(&g_real.unwind_backtrace), 0},
    // The FORK record and `fork` line, by which analysis knows a child's end (exec and
    // spawn are left alone: their wrappers would pass the recording on to new programs).
    {"fork", reinterpret_cast<void**>(&g_real.fork_), 0},
    // ucontext switches: each context keeps its own frames (context_stash.hpp); without
    // them a -pg or --patch return in a resumed coroutine finds another stack's frames.
    {"swapcontext", reinterpret_cast<void**>(&g_real.swapcontext_), 0},
    {"setcontext", reinterpret_cast<void**>(&g_real.setcontext_), 0},
    {"jump_fcontext", &g_real.jump_fcontext_, 0},   // Boost.Context (interpose_fcontext.cpp)
    {"ontop_fcontext", &g_real.ontop_fcontext_, 0},
    // Handlers run inside the runtime's wrapper (interpose_signal.cpp), and the program sees
    // its own in sigaction's old action. The interposers find the real ones themselves.
    {"sigaction", nullptr, 0},
    {"signal", nullptr, 0},
    {"bsd_signal", nullptr, 0},
    {"sysv_signal", nullptr, 0},
    {"__sysv_signal", nullptr, 0},
    // vfork keeps the hooks out of the child (interpose_vfork.cpp); exit and quick_exit
    // give back a busy count their handler interrupted (interpose_exit.cpp).
    {"vfork", nullptr, 0},
    {"__vfork", nullptr, 0},
    {"exit", nullptr, 0},
    {"quick_exit", nullptr, 0},
    // Read by the interposers, not redirected.
    {"_Unwind_GetCFA", reinterpret_cast<void**>(&g_real.get_cfa), 0},
    {"__cxa_get_globals", reinterpret_cast<void**>(&g_real.cxa_get_globals), 0},
};
constexpr unsigned kRedirected = 26;  // the first ones of g_interposed

void find_interposers(void* self) {
  for (unsigned i = 0; i < sizeof g_interposed / sizeof g_interposed[0]; ++i) {
    Interposed& x = g_interposed[i];
    void* real = x.real ? *x.real : nullptr;
    if (!real) real = dlsym(RTLD_DEFAULT, x.name);
    if (x.real) *x.real = real;
    // Redirected only where the program has the function at all.
    x.own = i < kRedirected && real ? reinterpret_cast<uintptr_t>(dlsym(self, x.name)) : 0;
  }
}

// The hook a GOT word named `name` should hold, and whether it is a -pg one; 0 if none.
uintptr_t own_hook(const char* name, bool* pg) {
  *pg = true;
  if (strcmp(name, "mcount") == 0) return g_own.mcount;
  if (strcmp(name, "__fentry__") == 0) return g_own.fentry;
  *pg = false;
  if (strcmp(name, "__cyg_profile_func_enter") == 0) return g_own.cyg_enter;
  if (strcmp(name, "__cyg_profile_func_exit") == 0) return g_own.cyg_exit;
  return 0;
}

// The runtime's own instrumented code (the calibration's probe functions) calls the hooks
// through its GOT too: bound to glibc's, the calibration would measure nothing. Its GOT is
// made to point to its own hooks here, for good (it serves only the calibration).
void rebind_own_slot(const GotSlot& g, void*) {
  bool pg;
  if (uintptr_t ours = own_hook(g.name, &pg))
    if (*g.slot != ours) store_got_slot(g.slot, ours);
}

constexpr uint32_t kMaxPatches = 1u << 21;  // 2 Mi sites: 64 MiB of address space, reserved

struct Collect {
  AttachSites* out;
  const dl_phdr_info* info;
};

// The GOT words listed for the interposers and hooks (few: a dozen per module).
constexpr unsigned kMaxWords = 8192;
uintptr_t g_words[kMaxWords];
unsigned g_word_count = 0;

// Lists one patch; returns its entry (zeroed first, attach_sites_next), or nullptr.
attach_abi::Patch* add(AttachSites* out, uint64_t addr, uint32_t len, attach_abi::PatchKind kind,
                       const void* old_bytes, const void* new_bytes) {
  attach_abi::Patch* next = attach_sites_next(out);
  if (!next) return nullptr;
  attach_abi::Patch& p = *next;
  if (kind == attach_abi::kGotWord && g_word_count < kMaxWords) g_words[g_word_count++] = addr;
  p.addr = addr;
  p.len = len;
  p.kind = kind;
  memset(p.old_bytes, 0, sizeof p.old_bytes);
  memset(p.new_bytes, 0, sizeof p.new_bytes);
  memcpy(p.old_bytes, old_bytes, len);
  memcpy(p.new_bytes, new_bytes, len);
  return next;
}

bool is_nop_sled(const uint8_t* b) {
  // 0f 1f 44 00 xx (nopl disp8(%rax,%rax,1); -mnop-mcount, clang's patchable entry) or
  // five 90 (gcc's -fpatchable-function-entry=5), as sled_patch.cpp accepts.
  if (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0x00) return true;
  return b[0] == 0x90 && b[1] == 0x90 && b[2] == 0x90 && b[3] == 0x90 && b[4] == 0x90;
}

const ExecSegment* segment_of(const SledModule& m, uintptr_t site) {
  for (int i = 0; i < m.exec_count; ++i)
    if (site >= m.exec[i].start && site + 5 <= m.exec[i].end) return &m.exec[i];
  return nullptr;
}

void collect_sleds(const dl_phdr_info* info, AttachSites* out) {
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
  SledModule m;
  if (!sled_read_module(info, path, &m) || (m.list_count == 0 && !m.xray_map) || m.imports_pg ||
      m.exec_count == 0)
    return;
  sled_select_module(info);  // --include/--exclude: only selected functions are patched
  if (m.xray_map) {
    // clang -fxray-instrument: the XRay pass lists its writes instead of making them.
    XrayPatchStats xs{};
    AttachSites* prev = attach_collect_begin(out);
    xray_patch_module(m, false, &xs);
    attach_collect_end(prev);
    out->refused += xs.refused;
    if (xs.failure && !out->failure) out->failure = xs.failure;
    if (m.list_count == 0) return;
  }
  EntryCheck entries(info);
  const uintptr_t fentry = g_own.fentry;
  uintptr_t stub = 0;
  static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  for (int l = 0; l < m.list_count && !out->failure; ++l) {
    const SledList& list = m.lists[l];
    for (size_t i = 0; i < list.count && !out->failure; ++i) {
      uintptr_t site = list.entries[i];
      if (site == 0) continue;  // a discarded function
      if (!segment_of(m, site)) site += info->dlpi_addr;  // a link-time address
      const ExecSegment* seg = segment_of(m, site);
      if (!seg) continue;
      const auto* bytes = reinterpret_cast<const uint8_t*>(site);
      if (!is_nop_sled(bytes)) {
        ++out->refused;
        continue;
      }
      uintptr_t fn = site;
      if (site >= seg->start + 4 && memcmp(bytes - 4, endbr64, 4) == 0) fn = site - 4;
      if (!entries.known() || entries.where(fn) != EntryCheck::Where::kStart) {
        ++out->refused;  // nops, but nothing confirms a function starts there
        continue;
      }
      if (!sled_select(fn)) continue;  // not selected: its nops stay
      uintptr_t to = fentry;
      if (!rel32_reaches(site + 5, to)) {
        if (!stub) stub = sled_stub_near(m.exec[0].start, m.exec[m.exec_count - 1].end, fentry);
        if (!stub) {
          out->failure = "no page for a stub within 2 GiB of a module could be mapped";
          return;
        }
        to = stub;
      }
      uint8_t call[5] = {0xe8, 0, 0, 0, 0};
      int32_t rel = static_cast<int32_t>(static_cast<intptr_t>(to - (site + 5)));
      memcpy(call + 1, &rel, 4);
      add(out, site, 5, attach_abi::kSledCall, bytes, call);
      ++out->sleds;
    }
  }
}

void visit_slot(const GotSlot& g, void* p) {
  auto* out = static_cast<AttachSites*>(p);
  bool pg;
  uintptr_t ours = own_hook(g.name, &pg);
  uint64_t* count = pg ? &out->got_pg : &out->got_cyg;
  for (unsigned i = 0; i < kRedirected && !ours; ++i)
    if (g_interposed[i].own && strcmp(g.name, g_interposed[i].name) == 0) {
      ours = g_interposed[i].own;
      count = &out->got_unwind;
    }
  if (!ours && (ours = attach_dl_wrapper(g.name))) count = &out->got_unwind;  // attach_dlopen.hpp
  if (!ours) return;
  uintptr_t now = *g.slot;
  if (now == ours) return;
  attach_abi::Patch* word = add(out, reinterpret_cast<uintptr_t>(g.slot), 8,
                                attach_abi::kGotWord, &now, &ours);
  if (word && count == &out->got_unwind) word->interposer = 1;
  ++*count;
}

int module_callback(dl_phdr_info* info, size_t, void* p) {
  auto* out = static_cast<AttachSites*>(p);
  if (out->failure) return 1;
  if (!attach_module_pinned(info)) return 0;  // loaded since the pin: the first pass's
  attach_collect_module(info, out);
  return 0;
}

}  // namespace

void attach_collect_module(const dl_phdr_info* info, AttachSites* out) {
  const ElfW(Dyn)* dyn = nullptr;
  const auto self = reinterpret_cast<uintptr_t>(&attach_collect_sites);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t a = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(a);
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t a = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && self >= a && self < a + ph.p_memsz) {  // the runtime
      if (dyn) for_each_got_slot(info->dlpi_addr, dyn, rebind_own_slot, nullptr);
      return;
    }
  }
  collect_sleds(info, out);
  if (dyn) for_each_got_slot(info->dlpi_addr, dyn, visit_slot, out);
}

attach_abi::Patch* attach_sites_next(AttachSites* out) {
  if (out->count == kMaxPatches) {
    out->failure = "more than 2097152 sites to patch";
    return nullptr;
  }
  attach_abi::Patch* p = &out->patches[out->count++];
  memset(p, 0, sizeof *p);
  return p;
}

bool attach_sites_has_word(const AttachSites*, uintptr_t slot) {
  for (unsigned i = 0; i < g_word_count; ++i)
    if (g_words[i] == slot) return true;
  return false;
}

void attach_collect_sites(AttachSites* out) {
  out->count = 0;
  g_word_count = 0;
  out->sleds = out->got_pg = out->got_cyg = out->got_unwind = out->refused = 0;
  out->entries = out->libcalls = out->xray = 0;
  out->failure = nullptr;
  if (!out->patches) {
    void* mem = mmap(nullptr, kMaxPatches * sizeof(attach_abi::Patch), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
      out->failure = "cannot map the patch list";
      return;
    }
    out->patches = static_cast<attach_abi::Patch*>(mem);
  }
  if (!find_own_hooks()) {
    out->failure = "the runtime cannot find its own hooks (dlsym)";
    return;
  }
  // A dlclose in another thread meanwhile must not unmap what the passes read (attach_pins.hpp).
  static ModulePins pins;
  pins.pin();
  dl_iterate_phdr(module_callback, out);
  // --patch, then library calls, as at start-up (sled_patch_modules): listed, not written.
  // The library-call pass takes the modules the entry pass patches as instrumented.
  if (!out->failure) {
    attach_collect_begin(out);
    entry_patch_attach_pass();
    libcall_attach_pass();
    attach_collect_end();
  }
  // No hook to turn on: nothing at all is patched (the interposers alone record nothing).
  if (out->sleds + out->got_pg + out->got_cyg + out->entries + out->xray == 0) out->count = 0;
  attach_dl_begin(out);  // modules loaded from now on: attach_dlopen.hpp
  pins.unpin();
}

}  // namespace callmon::rt
