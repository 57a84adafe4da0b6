// The nop-sled mode (docs/modes.md, "Nop sleds"): programs built with gcc's
// -pg -mfentry -mnop-mcount -mrecord-mcount or with -fpatchable-function-entry=5 carry a
// 5-byte nop at the entry of every function and a list of those addresses. Unrecorded they
// run at native speed; under `callmon record` the runtime turns the nops of the selected
// functions (sled_select.hpp) into jumps to stubs that call them (sled_call_stub.hpp), so
// they are recorded with the -pg -mfentry hooks (hooks_pg.cpp) without a redirected return;
// the same pass gives the `call __fentry__` of -pg -mfentry modules stubs too
// (fentry_sites.hpp).
#pragma once

struct dl_phdr_info;

namespace callmon::rt {

// Patches every loaded module not patched yet: at start-up from the library's constructor
// (before the program's own constructors and threads), and again after a dlopen. Does
// nothing unless recording was requested (CALLMON_DIR). Sites that do not hold one of the
// expected nop encodings are left alone and reported on stderr, one line per module.
// Takes the dynamic loader's lock (dl_iterate_phdr) and mmaps/mprotects: never from a
// signal handler or a hook's fast path. Serialised internally.
void sled_patch_modules();

// After a dlopen (interpose_process.cpp): the next sled_patch_pending() runs a pass. The
// dlsym interposer calls it, so a function pointer from dlsym points to patched code; the
// next hook of the thread that called dlopen runs a pass too (hooks.cpp).
void sled_request_pass();
void sled_patch_pending();

// Non-zero while a pass is asked for and not run yet. Read by the dlsym interposer itself
// (see interpose_dlsym.cpp on ThreadSanitizer); set and taken through the functions above.
extern int g_sled_pass_pending;

// One module of another link namespace (namespace_patch.hpp), during sled_patch_modules:
// its XRay sleds patched, and its nop-sled lists only when `lists` (their `call __fentry__`
// hijacks returns, which that namespace's unwinder cannot follow). Returns kSledLists if it
// carries nop-sled lists, kSledXray if XRay sleds (0 if seen already in this pass's epoch).
constexpr unsigned kSledLists = 1, kSledXray = 2;
unsigned sled_patch_module(dl_phdr_info* info, bool lists);

// Whether any site was patched in this process (the process records through the -pg
// entry trampoline: calibration measures those hooks).
bool sled_patched_any();

// `record -p`, in the thread the tool called into (callmon_attach_pass): the attach's pass
// (attach_dl_pass), unless its lock or the list's is held, which may be by this very
// thread where the tool stopped it: then false, nothing done, and the tool tries again.
bool sled_patch_attach_try();

}  // namespace callmon::rt
