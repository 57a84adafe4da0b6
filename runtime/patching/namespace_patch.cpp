// namespace_patch_modules (namespace_patch.hpp): the other namespaces' modules, one at a
// time, through the same per-module passes as the base namespace's (sled_patch_module,
// entry_patch_module) and the GOT API (got_slots.hpp) for the probes' words.
#include "runtime/patching/namespace_patch.hpp"

#include <elf.h>
#include <link.h>
#include <string.h>

#include "runtime/core/sys.hpp"
#include "runtime/patching/entry_patch.hpp"
#include "runtime/patching/got_redirect.hpp"
#include "runtime/patching/got_slots.hpp"
#include "runtime/patching/namespace_dl.hpp"
#include "runtime/patching/namespace_walk.hpp"
#include "runtime/patching/sled_patch.hpp"

extern "C" void __cyg_profile_func_enter(void*, void*);  // cyg_hooks.S
extern "C" void __cyg_profile_func_exit(void*, void*);
extern "C" void mcount();      // pg_entry.S
extern "C" void __fentry__();

namespace callmon::rt {
namespace {

// What a module imports, by its GOT slots' names.
struct Imports {
  bool cyg = false, pg = false;
  const char* hijack_unsafe = nullptr;  // a function that unwinds, jumps or switches stacks
  const char* never = nullptr;          // one that starts processes or threads
};

bool any_of(const char* name, const char* const* list) {
  for (; *list; ++list)
    if (strcmp(name, *list) == 0) return true;
  return false;
}

// Functions whose callers' frames are left, re-entered or walked by code that knows nothing
// of a hijacked return address: in the base namespace the runtime interposes them
// (interpose_exceptions.cpp, interpose_pg.cpp, interpose_context.cpp); the namespace's own
// copies are not interposed, and an unwinder there cannot find the runtime's return
// trampoline (its FDE lookup sees that namespace only): a throw would end the program.
const char* const kHijackUnsafe[] = {
    "_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
    "_Unwind_ForcedUnwind", "_Unwind_Backtrace", "__cxa_throw", "__cxa_rethrow",
    "__gxx_personality_v0", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
    "setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "setcontext", "swapcontext",
    "makecontext", "jump_fcontext", "ontop_fcontext", "backtrace", "pthread_exit",
    "pthread_cancel", nullptr};
// Started through the namespace's libc, a fork child would write into the parent's files
// (the runtime's fork handling is the base libc's atfork and interposer), and a thread's
// end would not reach the runtime's key destructor (that libc keeps its own keys).
const char* const kNever[] = {"fork", "_Fork", "vfork", "__vfork", "clone", "clone3",
                              "daemon", "pthread_create", nullptr};

void scan_slot(const GotSlot& slot, void* p) {
  Imports& im = *static_cast<Imports*>(p);
  const char* n = slot.name;
  if (!n || !n[0]) return;
  if (!strcmp(n, "__cyg_profile_func_enter") || !strcmp(n, "__cyg_profile_func_exit")) im.cyg = true;
  else if (!strcmp(n, "mcount") || !strcmp(n, "__fentry__") || !strcmp(n, "_mcount")) im.pg = true;
  else if (!im.never && any_of(n, kNever)) im.never = n;
  else if (!im.hijack_unsafe && any_of(n, kHijackUnsafe)) im.hijack_unsafe = n;
}

struct Redirect {
  bool pg;             // the -pg words too (else only the cyg ones)
  unsigned done, failed;
};

// A probe's GOT word gets the runtime's function (the base namespace's libcallmon).
void redirect_slot(const GotSlot& slot, void* p) {
  Redirect& r = *static_cast<Redirect*>(p);
  const char* n = slot.name;
  if (!n) return;
  uintptr_t ours = 0;
  if (!strcmp(n, "__cyg_profile_func_enter")) ours = reinterpret_cast<uintptr_t>(&__cyg_profile_func_enter);
  else if (!strcmp(n, "__cyg_profile_func_exit")) ours = reinterpret_cast<uintptr_t>(&__cyg_profile_func_exit);
  else if (r.pg && (!strcmp(n, "mcount") || !strcmp(n, "_mcount"))) ours = reinterpret_cast<uintptr_t>(&mcount);
  else if (r.pg && !strcmp(n, "__fentry__")) ours = reinterpret_cast<uintptr_t>(&__fentry__);
  if (!ours) return;
  // Already the runtime's: a pass after a dlclose looks at every module again (visit).
  if (*slot.slot == ours || store_got_slot(slot.slot, ours)) ++r.done;
  else ++r.failed;
}

// What was decided for each module, by load address and dynamic section: the sled and
// entry passes see a module once per epoch (until a dlclose), this keeps their answer.
struct Decided {
  uintptr_t base;
  const void* dyn;
  NsState state;
  bool own_hooks;  // its functions record themselves (probes, sleds or entries patched)
  bool libcalls;   // its library calls get probes (got_redirect.hpp): recorded, hijack-safe
  bool libcalls_done;
};
constexpr unsigned kMaxDecided = 256;
Decided g_decided[kMaxDecided];
unsigned g_decided_count = 0;
unsigned long long g_subs = ~0ull;

Decided* find(uintptr_t base, const void* dyn) {
  for (unsigned i = 0; i < g_decided_count; ++i)
    if (g_decided[i].base == base && g_decided[i].dyn == dyn) return &g_decided[i];
  return nullptr;
}

const void* dynamic_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      return reinterpret_cast<const void*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  return nullptr;
}

int visit(dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_subs != g_subs) {  // a dlclose since: addresses may be reused
    g_decided_count = 0;
    g_subs = info->dlpi_subs;
  }
  const void* dyn = dynamic_of(info);
  if (!dyn || find(info->dlpi_addr, dyn)) return 0;
  // Its own dlopen & co. lead to the runtime first (namespace_dl.hpp), whatever is decided
  // below: the modules it loads are looked at too.
  namespace_dl_redirect(info, dyn);
  Imports im;
  for_each_got_slot(info->dlpi_addr, dyn, scan_slot, &im);
  const bool none = im.never != nullptr;
  const bool hijack_ok = !none && !im.hijack_unsafe;
  Redirect r{hijack_ok, 0, 0};
  if (!none && (im.cyg || im.pg)) for_each_got_slot(info->dlpi_addr, dyn, redirect_slot, &r);
  unsigned sleds = none ? 0 : sled_patch_module(info, hijack_ok);
  // --patch: the entries selected by --patch-module; a module it would patch but may not is
  // listed as refused. (A module with probes or sleds is left to them, as in the base.)
  char why[256];
  LineBuf b(why, sizeof why);  // no libc string function: the program may define its own
  if (!hijack_ok) {
    b.str("loaded with dlmopen into another namespace and imports ");
    b.str(none ? im.never : im.hijack_unsafe).str(": not patched");
  }
  entry_patch_module(info, hijack_ok ? nullptr : b.c_str());
  bool entries = false;  // --patch patched some of its functions
  for (int i = 0; i < info->dlpi_phnum && hijack_ok; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && entry_patched_code(lo, lo + ph.p_filesz))
      entries = true;
  }
  const bool recorded = r.done || (sleds && hijack_ok) || (sleds & kSledXray) || entries;
  bool refused = none ? (im.cyg || im.pg || sleds) : (im.pg && !hijack_ok) || r.failed ||
                                                      ((sleds & kSledLists) && !hijack_ok);
  // Published after the entry is filled: the module scan reads the table under its own lock.
  unsigned n = g_decided_count;
  if (n < kMaxDecided) {
    g_decided[n] = {info->dlpi_addr, dyn, refused ? kNsRefused : recorded ? kNsRecorded : kNsUnknown,
                    recorded || refused || entries || im.cyg || im.pg || sleds != 0,
                    (recorded || entries) && hijack_ok && !refused, false};
    __atomic_store_n(&g_decided_count, n + 1, __ATOMIC_RELEASE);
  }
  return 0;
}

// Whether the functions of the module at `base` record themselves: a library call into it
// is recorded by its own hooks. A module not decided (none should be, after the first walk)
// counts as not.
bool own_hooks(uintptr_t base, const void* dyn) {
  const Decided* d = find(base, dyn);
  return d && d->own_hooks;
}

// The second walk: every module decided, so a call into an instrumented one is known as such.
int visit_libcalls(dl_phdr_info* info, size_t, void*) {
  Decided* d = find(info->dlpi_addr, dynamic_of(info));
  if (!d || !d->libcalls || d->libcalls_done) return 0;
  d->libcalls_done = true;
  libcall_patch_namespace_module(info, d->dyn, own_hooks);
  return 0;
}

}  // namespace

void namespace_patch_modules() {
  for_each_other_namespace_module(visit, nullptr);
  entry_patch_namespaces_done();
  // Their library calls (got_redirect.hpp), after the base namespace's as there.
  for_each_other_namespace_module(visit_libcalls, nullptr);
}

NsState namespace_module_state(uintptr_t base, const void* dyn) {
  unsigned n = __atomic_load_n(&g_decided_count, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n; ++i)
    if (g_decided[i].base == base && g_decided[i].dyn == dyn) return g_decided[i].state;
  return kNsUnknown;
}

}  // namespace callmon::rt
