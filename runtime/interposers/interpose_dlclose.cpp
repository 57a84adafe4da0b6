// dlclose: notes the modules it unmapped (`module-unmapped` lines, process.hpp), so that a
// library loaded at their addresses later is not taken for them in the analysis
// (format/module_lifetimes.hpp). A plain wrapper: unlike dlopen and dlsym, dlclose does not
// look at its caller.
#include <dlfcn.h>

#include "runtime/core/clock.hpp"
#include "runtime/patching/attach_dlopen.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/recording/process.hpp"

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using DlcloseFn = int (*)(void*);
DlcloseFn g_real_dlclose = nullptr;

// The next definition of dlclose: its default version (GLIBC_2.34 since glibc merged libdl
// into libc, GLIBC_2.2.5 before), through dlvsym, which is not interposed.
DlcloseFn real_dlclose() {
  DlcloseFn f = __atomic_load_n(&g_real_dlclose, __ATOMIC_ACQUIRE);
  if (f) return f;
  f = reinterpret_cast<DlcloseFn>(dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.34"));
  if (!f) f = reinterpret_cast<DlcloseFn>(dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.2.5"));
  __atomic_store_n(&g_real_dlclose, f, __ATOMIC_RELEASE);
  return f;
}

}  // namespace

// The scans before and after are the recorder's time, not the caller's: PAUSEs.
// Also the other namespaces' dlclose (ns_dl_trampolines.S), with their own real function.
extern "C" __attribute__((visibility("hidden"))) int callmon_dlclose_with(void* handle,
                                                                       DlcloseFn real) {
  uint64_t from = callmon::rt::read_ticks();
  callmon::rt::modules_before_unload();
  callmon::rt::note_pause(from, callmon::rt::read_ticks());
  // `record -p`: the detach waits while an unloaded module's entries may still be listed.
  const bool unloading = callmon::rt::attach_dl_unload_begin();
  int rc = real(handle);
  from = callmon::rt::read_ticks();
  callmon::rt::modules_after_unload();
  callmon::rt::attach_dl_after_unload(unloading);  // `record -p`: its list forgets them
  callmon::rt::note_pause(from, callmon::rt::read_ticks());
  return rc;
}

CALLMON_EXPORT int dlclose(void* handle) { return callmon_dlclose_with(handle, real_dlclose()); }
