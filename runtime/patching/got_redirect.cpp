// The library-call pass (see got_redirect.hpp and docs/patching.md, "Library calls").
//
// Per instrumented module: each JUMP_SLOT is redirected to a stub of its own unless its
// name is one whose return must not be hijacked (never returns, returns twice, switches
// stacks, reads its return address), its target is in the runtime or the dynamic linker,
// or its target is in the module itself (a call to its own exported function). GLOB_DAT
// slots are refused: they also serve `&function`, and another value there would break
// pointer equality across modules.
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
#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/got_stub.hpp"
#include "runtime/patching/got_symbols.hpp"
#include "runtime/patching/sled_elf.hpp"

namespace callmon::rt {

bool g_libcall_cyg_program = false;

namespace {

constexpr unsigned kMaxModules = 512;

struct Module {
  uintptr_t bias;
  const void* phdr;
  const void* dyn;
  uintptr_t lo, hi;
  bool instrumented;
};
Module g_found[kMaxModules];
unsigned g_found_count = 0;

struct Done {
  uintptr_t bias;
  const void* phdr;
};
Done g_done[kMaxModules];
unsigned g_done_count = 0;
unsigned long long g_subs = 0;

unsigned g_slots = 0, g_refused = 0;

// Calls that never return, return twice, switch stacks or look at their own return
// address (dlsym's RTLD_NEXT, dlopen's caller): their return is not hijacked, so they are
// not recorded. Prefixes end in '*'.
const char* const kExcluded[] = {
    "exit", "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "thrd_exit",
    "__assert_fail", "__assert_perror_fail", "__assert", "__stack_chk_fail",
    "__fortify_fail", "__chk_fail", "err", "errx", "verr", "verrx",
    "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "setjmp", "_setjmp",
    "sigsetjmp", "__sigsetjmp", "savectx", "getcontext", "setcontext", "swapcontext",
    "makecontext", "vfork", "clone", "clone3", "__clone", "fork", "_Fork",
    "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve",
    "execveat", "__cxa_throw", "__cxa_rethrow", "__cxa_call_unexpected",
    "_ZSt9terminatev", "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
    "_Unwind_*", "__tls_get_addr", "__libc_start_main", "__libc_start_call_main",
    "_dl_*", "dl*", "__cyg_profile_func_*", "mcount", "_mcount", "__fentry__",
    "__gmon_start__", "__cxa_finalize",
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
  if (g_done_count < kMaxModules) g_done[g_done_count++] = {bias, phdr};
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
  Module m{info->dlpi_addr, info->dlpi_phdr, nullptr, UINTPTR_MAX, 0, false};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) m.dyn = reinterpret_cast<const void*>(info->dlpi_addr + ph.p_vaddr);
    if (ph.p_type == PT_LOAD) {
      uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
      if (lo < m.lo) m.lo = lo;
      if (lo + ph.p_memsz > m.hi) m.hi = lo + ph.p_memsz;
    }
  }
  if (!m.dyn || m.lo >= m.hi) return 0;
  auto self = reinterpret_cast<uintptr_t>(&libcall_patch_modules);
  if (self >= m.lo && self < m.hi) return 0;  // the runtime itself
  const char* name = info->dlpi_name;
  if (name && (strstr(name, "linux-vdso") || strstr(name, "/ld-linux") || strstr(name, "/ld.so")))
    return 0;
  if (seen(m.bias, m.phdr)) return 0;
  Imports im{false, false};
  for_each_got_slot(m.bias, m.dyn, note_import, &im);
  m.instrumented = im.cyg || im.pg;
  if (im.cyg) g_libcall_cyg_program = true;
  if (!m.instrumented) {
    // Nop sleds: instrumented too once the sled pass has patched them.
    const char* path = name && name[0] ? name : "/proc/self/exe";
    SledModule sm;
    if (sled_read_module(info, path, &sm) && sm.list_count > 0) m.instrumented = true;
  }
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
unsigned g_pending_count = 0;

void flush_pending() {
  got_stubs_seal();
  for (unsigned i = 0; i < g_pending_count; ++i) {
    if (store_got_slot(g_pending[i].slot, g_pending[i].stub)) ++g_slots;
    else ++g_refused;
  }
  g_pending_count = 0;
}

struct PassCtx {
  const Module* m;
  DynTables own;
};

void redirect(const GotSlot& s, void* p) {
  auto* c = static_cast<PassCtx*>(p);
  if (s.type != R_X86_64_JUMP_SLOT) {
    // GLOB_DAT: also what `&function` reads; see the top of the file.
    ++g_refused;
    return;
  }
  if (excluded(s.name)) return;
  uintptr_t cur = __atomic_load_n(s.slot, __ATOMIC_RELAXED);
  if (cur == 0 || got_is_stub(cur)) return;
  uintptr_t target = cur;
  const link_map* lm = nullptr;
  const Elf64_Sym* sym = nullptr;
  if (cur >= c->m->lo && cur < c->m->hi) {
    // Not bound yet (its PLT stub), or bound to the module's own definition.
    target = bind_like_loader(s.name, dyn_needed_version(c->own, s.name), &lm, &sym);
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
  g_pending[g_pending_count++] = {s.slot, stub};
  if (g_pending_count == sizeof g_pending / sizeof g_pending[0]) flush_pending();
}

bool enabled() { return read_options().libcall[0] != '0'; }

}  // namespace

void libcall_patch_modules() {
  if (!enabled()) return;
  ErrnoSaver es;
  unsigned long long subs = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    *static_cast<unsigned long long*>(p) = info->dlpi_subs;
    return 1;
  }, &subs);
  if (subs != g_subs) {
    g_done_count = 0;  // a dlclose: addresses may be reused (stubs already in place are skipped)
    g_subs = subs;
  }
  g_found_count = 0;
  dl_iterate_phdr(collect, nullptr);
  // Outside dl_iterate_phdr: dladdr1 takes the loader's other lock.
  for (unsigned i = 0; i < g_found_count; ++i) {
    PassCtx c{&g_found[i], dyn_tables(g_found[i].bias, g_found[i].dyn)};
    for_each_got_slot(g_found[i].bias, g_found[i].dyn, redirect, &c);
  }
  flush_pending();
}

unsigned libcall_slot_count() { return g_slots; }
unsigned libcall_refused_count() { return g_refused; }

}  // namespace callmon::rt
