// The library-call pass (see got_redirect.hpp and docs/patching.md, "Library calls").
//
// Per instrumented module: each JUMP_SLOT is redirected to a stub of its own unless its
// name is one whose return must not be hijacked (never returns, returns twice, switches
// stacks, reads its return address), its target is in the runtime or the dynamic linker,
// or its target is in the module itself (a call to its own exported function). A GLOB_DAT
// slot (-fno-plt's `call *f@GOTPCREL(%rip)`) also serves `&f`, and another value there
// would break pointer equality across modules: it is redirected only when a scan of the
// module's code finds calls and jumps through it and nothing else (got_refs.hpp).
//
// Lazy binding: a slot not yet bound holds the address of its own PLT stub (inside the
// module). The pass binds it itself, as the loader would at the first call (bind_like_loader,
// with the version the module asks for); a name that does not resolve is left alone, so a
// program with an unresolvable but never-called symbol starts as before.
#include "runtime/patching/got_redirect.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "runtime/core/options.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/patching/attach_collect.hpp"
#include "runtime/patching/attach_pins.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/entry_patch.hpp"
#include "runtime/patching/got_refs.hpp"
#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/got_stub.hpp"
#include "runtime/patching/got_symbols.hpp"
#include "runtime/patching/module_span.hpp"
#include "runtime/patching/namespace_walk.hpp"
#include "runtime/patching/own_unwinder.hpp"
#include "runtime/patching/sled_call_stub.hpp"
#include "runtime/patching/sled_elf.hpp"

extern "C" void callmon_libcall_block();  // libcall_entry.S: the return point at +21

namespace callmon::rt {

bool g_libcall_cyg_program = false;
uintptr_t g_libcall_calls = 0;

namespace {
bool g_block_done = false;  // g_libcall_calls decided
}  // namespace

namespace {

constexpr unsigned kMaxModules = 512;

struct Module {
  uintptr_t bias;
  const void* phdr;
  const void* dyn;
  uintptr_t lo, hi;
  bool instrumented;
  uintptr_t exec_lo[4], exec_hi[4];  // executable PT_LOAD segments (the code scan)
  int exec_count;
};
Module g_found[kMaxModules];
unsigned g_found_count = 0;

// Every module seen (instrumented or not), so that a slot whose target is in an
// instrumented module is left alone: that function's own hooks record the call.
struct Done {
  uintptr_t bias;
  const void* phdr;
  uintptr_t lo, hi;
  bool instrumented;
};
Done g_done[kMaxModules];
unsigned g_done_count = 0;
unsigned long long g_subs = 0;

unsigned g_slots = 0, g_refused = 0;

// Distinct recorded addresses and their names (libcall_name).
struct Named {
  uintptr_t fn;
  const char* name;
};
Named g_named[4096];
unsigned g_named_count = 0;

void remember_name(uintptr_t fn, const char* name) {
  for (unsigned i = g_named_count; i-- > 0;)
    if (g_named[i].fn == fn) return;
  if (g_named_count < sizeof g_named / sizeof g_named[0]) {
    g_named[g_named_count] = {fn, name};
    __atomic_store_n(&g_named_count, g_named_count + 1, __ATOMIC_RELEASE);
  }
}

// Calls that never return, return twice, switch stacks or look at their own return
// address (dlsym's RTLD_NEXT, dlopen's caller): their return is not hijacked, so they are
// not recorded. Prefixes end in '*'.
const char* const kExcluded[] = {
    "exit", "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "thrd_exit",
    "__assert_fail", "__assert_perror_fail", "__assert", "__stack_chk_fail",
    "__fortify_fail", "__chk_fail", "err", "errx", "verr", "verrx",
    "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "setjmp", "_setjmp",
    "sigsetjmp", "__sigsetjmp", "savectx", "getcontext", "setcontext", "swapcontext",
    "makecontext", "jump_fcontext", "ontop_fcontext", "make_fcontext",  // Boost.Context
    "vfork", "clone", "clone3", "__clone", "fork", "_Fork",
    "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve",
    "execveat", "__cxa_throw", "__cxa_rethrow", "__cxa_call_unexpected",
    "_ZSt9terminatev", "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
    "_Unwind_*", "__tls_get_addr", "__libc_start_main", "__libc_start_call_main",
    "_dl_*", "dl*", "__cyg_profile_func_*", "mcount", "_mcount", "__fentry__",
    "__gmon_start__", "__cxa_finalize",
    // Called by the unwinder through a pointer (a non-PIE executable's canonical PLT entry),
    // not by the program: not a call of the program's, and in the middle of an unwinding.
    "__gxx_personality_v0", "__gcc_personality_v0", "__gxx_personality_sj0",
};

bool excluded(const char* name) {
  for (const char* e : kExcluded) {
    size_t n = strlen(e);
    if (e[n - 1] == '*' ? strncmp(name, e, n - 1) == 0 : strcmp(name, e) == 0) return true;
  }
  return false;
}

bool seen(uintptr_t bias, const void* phdr) {
  for (unsigned i = 0; i < g_done_count; ++i)
    if (g_done[i].bias == bias && g_done[i].phdr == phdr) return true;
  return false;
}

void note_done(const Module& m) {
  if (g_done_count < kMaxModules) g_done[g_done_count++] = {m.bias, m.phdr, m.lo, m.hi, m.instrumented};
}

bool in_instrumented_module(uintptr_t addr) {
  for (unsigned i = 0; i < g_done_count; ++i)
    if (addr >= g_done[i].lo && addr < g_done[i].hi) return g_done[i].instrumented;
  return false;
}

struct Imports {
  bool cyg, pg;
};

void note_import(const GotSlot& s, void* ctx) {
  auto* im = static_cast<Imports*>(ctx);
  if (strncmp(s.name, "__cyg_profile_func_", 19) == 0) im->cyg = true;
  if (strcmp(s.name, "mcount") == 0 || strcmp(s.name, "__fentry__") == 0 ||
      strcmp(s.name, "_mcount") == 0)
    im->pg = true;
}

int collect(dl_phdr_info* info, size_t, void*) {
  if (g_found_count == kMaxModules) return 1;
  Module m{info->dlpi_addr, info->dlpi_phdr, nullptr, UINTPTR_MAX, 0, false, {}, {}, 0};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) m.dyn = reinterpret_cast<const void*>(info->dlpi_addr + ph.p_vaddr);
    if (ph.p_type == PT_LOAD) {
      uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
      if (lo < m.lo) m.lo = lo;
      if (lo + ph.p_memsz > m.hi) m.hi = lo + ph.p_memsz;
      if ((ph.p_flags & PF_X) && m.exec_count < 4) {
        m.exec_lo[m.exec_count] = lo;
        m.exec_hi[m.exec_count++] = lo + ph.p_filesz;
      }
    }
  }
  if (!m.dyn || m.lo >= m.hi) return 0;
  auto self = reinterpret_cast<uintptr_t>(&libcall_patch_modules);
  if (self >= m.lo && self < m.hi) return 0;  // the runtime itself
  const char* name = info->dlpi_name;
  if (name && (strstr(name, "linux-vdso") || strstr(name, "/ld-linux") || strstr(name, "/ld.so")))
    return 0;
  if (seen(m.bias, m.phdr)) return 0;
  if (!attach_module_pinned(info)) return 0;  // `record -p`: read after the callback (attach_pins.hpp)
  Imports im{false, false};
  for_each_got_slot(m.bias, m.dyn, note_import, &im);
  m.instrumented = im.cyg || im.pg;
  if (im.cyg) g_libcall_cyg_program = true;
  if (!m.instrumented) {
    // Nop sleds: instrumented too once the sled pass has patched them.
    const char* path = name && name[0] ? name : "/proc/self/exe";
    SledModule sm;
    if (sled_read_module(info, path, &sm) && (sm.list_count > 0 || sm.xray_map)) {
      m.instrumented = true;
      // XRay sleds record through the -finstrument-functions hooks (xray_sleds.hpp).
      if (sm.xray_map) g_libcall_cyg_program = true;
    }
  }
  // Entry patching (--patch): a module with a patched function is instrumented now too.
  for (int i = 0; i < m.exec_count && !m.instrumented; ++i)
    if (entry_patched_code(m.exec_lo[i], m.exec_hi[i])) m.instrumented = true;
  note_done(m);
  if (m.instrumented) g_found[g_found_count++] = m;
  return 0;
}

// Binds `name` (with `version`) as the dynamic linker would for a module of the main
// namespace: the first module in load order (the global scope's order: the executable,
// LD_PRELOAD, then the libraries breadth-first, then those dlopen'ed) that defines a
// matching symbol. Not dlvsym: it treats an unversioned definition (an LD_PRELOAD
// interposer's, the runtime's own) differently from the loader. An ifunc is resolved by
// calling its resolver, as the loader does. Returns the target and its module, or 0.
uintptr_t bind_like_loader(const char* name, const char* version, const link_map** def,
                           const Elf64_Sym** def_sym) {
  for (const link_map* lm = _r_debug.r_map; lm; lm = lm->l_next) {
    if (lm->l_name && strstr(lm->l_name, "linux-vdso")) continue;  // not in the scope
    DynTables t = dyn_tables(lm->l_addr, lm->l_ld);
    const Elf64_Sym* sym = dyn_lookup_version(t, name, version);
    if (!sym) continue;
    *def = lm;
    *def_sym = sym;
    uintptr_t at = lm->l_addr + sym->st_value;
    if (ELF64_ST_TYPE(sym->st_info) == STT_GNU_IFUNC)
      at = reinterpret_cast<uintptr_t (*)()>(at)();
    return at;
  }
  return 0;
}

// bind_like_loader under the loader's list lock: dl_iterate_phdr holds the lock a dlopen on
// another thread takes to add its module to the list we walk. (Nothing in it may take the
// loader's other lock, as dladdr does: a dlopen holding that one waits for this one.)
uintptr_t bind_locked(const char* name, const char* version, const link_map** def,
                      const Elf64_Sym** def_sym) {
  struct Req {
    const char* name;
    const char* version;
    const link_map* def;
    const Elf64_Sym* sym;
    uintptr_t target;
  } req{name, version, nullptr, nullptr, 0};
  dl_iterate_phdr([](dl_phdr_info*, size_t, void* p) {
    auto* r = static_cast<Req*>(p);
    r->target = bind_like_loader(r->name, r->version, &r->def, &r->sym);
    return 1;
  }, &req);
  *def = req.def;
  *def_sym = req.sym;
  return req.target;
}

// The runtime's own link_map (its interposers are not library calls to record).
const link_map* self_map() {
  static const link_map* self = nullptr;
  if (!self) {
    Dl_info di;
    void* lm = nullptr;
    if (dladdr1(reinterpret_cast<void*>(&libcall_patch_modules), &di, &lm, RTLD_DL_LINKMAP))
      self = static_cast<const link_map*>(lm);
  }
  return self;
}

bool in_loader_or_runtime(const link_map* lm) {
  const char* n = lm->l_name;
  if (n && (strstr(n, "/ld-linux") || strstr(n, "/ld.so") || strstr(n, "linux-vdso"))) return true;
  return lm == self_map();
}

// Slots to store once their stubs' page is sealed.
struct Pending {
  uintptr_t* slot;
  uintptr_t stub;
};
Pending g_pending[1024];
uintptr_t g_pending_now[1024];  // attach: the slot's value now, put back at the detach
unsigned g_pending_count = 0;

void flush_pending() {
  got_stubs_seal();
  const bool attach = attach_collecting();  // listed for `record -p`, written by it
  for (unsigned i = 0; i < g_pending_count; ++i) {
    if (attach) {
      if (attach_list_libcall(g_pending[i].slot, g_pending_now[i], g_pending[i].stub)) ++g_slots;
    } else if (store_got_slot(g_pending[i].slot, g_pending[i].stub)) ++g_slots;
    else ++g_refused;
  }
  g_pending_count = 0;
}

// The module's GLOB_DAT slots with their references in its code (got_refs.hpp).
SlotRefs g_refs[4096];
size_t g_ref_count = 0;

void note_glob_dat(const GotSlot& s, void*) {
  if (s.type == R_X86_64_GLOB_DAT && g_ref_count < sizeof g_refs / sizeof g_refs[0])
    g_refs[g_ref_count++] = {reinterpret_cast<uintptr_t>(s.slot), 0, 0};
}

void classify_glob_dat(const Module& m) {
  g_ref_count = 0;
  for_each_got_slot(m.bias, m.dyn, note_glob_dat, nullptr);
  // Insertion sort: a module has a few dozen GLOB_DAT slots, already nearly in order.
  for (size_t i = 1; i < g_ref_count; ++i)
    for (size_t k = i; k > 0 && g_refs[k - 1].slot > g_refs[k].slot; --k) {
      SlotRefs t = g_refs[k];
      g_refs[k] = g_refs[k - 1];
      g_refs[k - 1] = t;
    }
  for (int i = 0; i < m.exec_count; ++i)
    got_classify_refs(m.exec_lo[i], m.exec_hi[i], g_refs, g_ref_count);
}

// Whether the module's code only calls through this GLOB_DAT slot (never reads it).
bool only_called(uintptr_t* slot) {
  for (size_t i = 0; i < g_ref_count; ++i)
    if (g_refs[i].slot == reinterpret_cast<uintptr_t>(slot))
      return g_refs[i].calls > 0 && g_refs[i].others == 0;
  return false;
}

struct PassCtx {
  const Module* m;
  DynTables own;
};

void redirect(const GotSlot& s, void* p) {
  auto* c = static_cast<PassCtx*>(p);
  if (excluded(s.name)) return;
  bool glob_dat = s.type == R_X86_64_GLOB_DAT;
  if (glob_dat && !only_called(s.slot)) {
    // Also (or only) what `&function` or a data access reads; see the top of the file.
    // Counted when the code uses it at all (a data object's slot is no library call).
    for (size_t i = 0; i < g_ref_count; ++i)
      if (g_refs[i].slot == reinterpret_cast<uintptr_t>(s.slot) && g_refs[i].calls) ++g_refused;
    return;
  }
  uintptr_t cur = __atomic_load_n(s.slot, __ATOMIC_RELAXED);
  if (cur == 0 || got_is_stub(cur)) return;
  uintptr_t target = cur;
  const link_map* lm = nullptr;
  const Elf64_Sym* sym = nullptr;
  if (glob_dat && cur >= c->m->lo && cur < c->m->hi) return;  // bound to its own function
  if (cur >= c->m->lo && cur < c->m->hi) {
    // Not bound yet (its PLT stub), or bound to the module's own definition.
    target = bind_locked(s.name, dyn_needed_version(c->own, s.name), &lm, &sym);
    if (!target) {
      ++g_refused;  // unresolvable now: the loader's lazy binding decides at the call
      return;
    }
    if (target >= c->m->lo && target < c->m->hi) return;  // its own function
  } else {
    Dl_info di;
    void* found = nullptr;
    if (!dladdr1(reinterpret_cast<void*>(target), &di, &found, RTLD_DL_LINKMAP) || !found) {
      ++g_refused;  // not in any module (generated code?): nothing to name it by
      return;
    }
    lm = static_cast<const link_map*>(found);
    sym = dyn_lookup(dyn_tables(lm->l_addr, lm->l_ld), s.name);
  }
  if (in_loader_or_runtime(lm)) return;
  if (in_instrumented_module(target)) return;  // its own hooks record it
  if (glob_dat && (!sym || (ELF64_ST_TYPE(sym->st_info) != STT_FUNC &&
                            ELF64_ST_TYPE(sym->st_info) != STT_GNU_IFUNC))) {
    ++g_refused;  // called through, but no function definition to name: left alone
    return;
  }
  // The address recorded: the symbol's definition in its module's .dynsym, so that an
  // ifunc's call is named by the name users know (memcpy), not by the variant chosen.
  uintptr_t fn = target;
  if (sym) {
    uintptr_t at = lm->l_addr + sym->st_value;
    if (ELF64_ST_TYPE(sym->st_info) == STT_GNU_IFUNC || at == target) fn = at;
  }
  uintptr_t stub = got_stub_add(LibcallData{fn, target});
  if (!stub) {
    ++g_refused;
    return;
  }
  remember_name(fn, s.name);
  g_pending_now[g_pending_count] = cur;
  g_pending[g_pending_count++] = {s.slot, stub};
  if (g_pending_count == sizeof g_pending / sizeof g_pending[0]) flush_pending();
}

bool enabled() { return read_options().libcall[0] != '0'; }

// A module of another namespace (libcall_patch_namespace_module).
struct NsCtx {
  uintptr_t lo, hi;  // its mapped range: a lazy word points at its PLT
  DynTables own;
  bool (*instrumented)(uintptr_t base, const void* dyn);
};

// As `redirect`, with the namespace's definitions: the loader's binding there is the first
// definition in that namespace's load order (namespace_definition), not the base scope's.
void redirect_ns(const GotSlot& s, void* p) {
  const NsCtx& c = *static_cast<const NsCtx*>(p);
  if (!s.name || s.type != R_X86_64_JUMP_SLOT || excluded(s.name)) return;
  const uintptr_t cur = __atomic_load_n(s.slot, __ATOMIC_RELAXED);
  if (cur == 0 || got_is_stub(cur)) return;
  const link_map* lm = nullptr;
  const Elf64_Sym* sym = nullptr;
  if (!namespace_definition(s.name, dyn_needed_version(c.own, s.name), &lm, &sym)) {
    ++g_refused;  // unresolvable now: the loader's lazy binding decides at the call
    return;
  }
  const uintptr_t at = lm->l_addr + sym->st_value;
  if (at >= c.lo && at < c.hi) return;  // its own function
  // The loader and the vDSO (the runtime is in the base namespace only). No dladdr here:
  // it takes the loader's other lock, which a dlopen holding the walk's one may wait for.
  const char* n = lm->l_name;
  if (n && (strstr(n, "/ld-linux") || strstr(n, "/ld.so") || strstr(n, "linux-vdso"))) return;
  if (c.instrumented(lm->l_addr, lm->l_ld)) return;  // its own hooks record it
  const bool lazy = cur >= c.lo && cur < c.hi;
  uintptr_t target = 0;
  if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC) {
    if (!lazy && cur != at) {
      ++g_refused;  // bound elsewhere than the look-up says: left to what the loader did
      return;
    }
    target = at;
  } else if (ELF64_ST_TYPE(sym->st_info) == STT_GNU_IFUNC) {
    target = lazy ? reinterpret_cast<uintptr_t (*)()>(at)() : cur;  // as the loader would
  } else {
    return;
  }
  const uintptr_t stub = got_stub_add(LibcallData{at, target});
  if (!stub) {
    ++g_refused;
    return;
  }
  remember_name(at, s.name);
  g_pending_now[g_pending_count] = cur;
  g_pending[g_pending_count++] = {s.slot, stub};
  if (g_pending_count == sizeof g_pending / sizeof g_pending[0]) flush_pending();
}

}  // namespace

void libcall_patch_namespace_module(const dl_phdr_info* info, const void* dyn,
                                    bool (*instrumented)(uintptr_t base, const void* dyn)) {
  if (!enabled() || own_unwinder_found()) return;  // said by libcall_patch_modules
  ErrnoSaver es;
  NsCtx c{UINTPTR_MAX, 0, dyn_tables(info->dlpi_addr, dyn), instrumented};
  module_span(info, &c.lo, &c.hi);
  if (c.lo >= c.hi) return;
  Imports im{false, false};
  for_each_got_slot(info->dlpi_addr, dyn, note_import, &im);
  if (im.cyg) g_libcall_cyg_program = true;
  for_each_got_slot(info->dlpi_addr, dyn, redirect_ns, &c);
  flush_pending();
}

void libcall_calls_setup() {
  if (g_block_done || attach_session() != 0) return;
  g_block_done = true;
  // A slot holding the return point must be known for one (hooks_pg.cpp,
  // is_return_trampoline). Its place in the block is the assembler's check
  // (libcall_entry.S): compared here, the compiler folds two symbols' addresses to unequal.
  const auto b = reinterpret_cast<uintptr_t>(&callmon_libcall_block);
  if (b % kSledStubSize == 0 && !sled_pools_full()) {
    sled_pools_publish(b, b + kSledStubSize, kSledStubSize);
    g_libcall_calls = 1;
  }
}

void libcall_patch_modules() {
  if (!enabled()) return;
  ErrnoSaver es;
  libcall_calls_setup();  // before any slot leads to the common entry
  unsigned long long subs = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    *static_cast<unsigned long long*>(p) = info->dlpi_subs;
    return 1;
  }, &subs);
  if (subs != g_subs) {
    g_done_count = 0;  // a dlclose: addresses may be reused (stubs already in place are skipped)
    g_subs = subs;
  }
  // Its own unwinder found: the walk below only tells whether calls were lost, said once.
  if (own_unwinder_found() && (own_unwinder_skips() & kSkipLibcalls)) return;
  g_found_count = 0;
  dl_iterate_phdr(collect, nullptr);
  if (own_unwinder_found()) {  // its exceptions cannot cross a library call's stub
    if (g_found_count) own_unwinder_skipped(kSkipLibcalls);  // said only when calls were lost
    return;
  }
  // Outside dl_iterate_phdr: dladdr1 takes the loader's other lock.
  for (unsigned i = 0; i < g_found_count; ++i) {
    classify_glob_dat(g_found[i]);
    PassCtx c{&g_found[i], dyn_tables(g_found[i].bias, g_found[i].dyn)};
    for_each_got_slot(g_found[i].bias, g_found[i].dyn, redirect, &c);
  }
  flush_pending();
}

void libcall_attach_pass() {
  g_block_done = true;  // the detach expects every frame's return redirected
  g_libcall_calls = 0;
  // The detach put every word back: each attach looks at every module again.
  g_done_count = 0;
  g_slots = g_refused = 0;
  libcall_patch_modules();
}

unsigned libcall_slot_count() { return g_slots; }

unsigned libcall_name_count() { return __atomic_load_n(&g_named_count, __ATOMIC_ACQUIRE); }

bool libcall_name(unsigned i, uintptr_t* fn, const char** name) {
  if (i >= libcall_name_count()) return false;
  *fn = g_named[i].fn;
  *name = g_named[i].name;
  return true;
}
unsigned libcall_refused_count() { return g_refused; }

}  // namespace callmon::rt
