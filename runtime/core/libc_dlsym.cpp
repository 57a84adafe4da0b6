// The C library's dlsym (libc_dlsym.hpp).
#include "runtime/core/libc_dlsym.hpp"

#include <dlfcn.h>

namespace callmon::rt {

namespace {
DlsymFn g_libc_dlsym = nullptr;
}

// Not instrumented when the runtime is built with ThreadSanitizer (tests/tsan): TSan's own
// start-up looks its interceptors up through dlsym, i.e. through the interposer that calls
// this, before it can take the function-entry events instrumentation would send it.
__attribute__((no_sanitize("thread"))) DlsymFn libc_dlsym() {
  DlsymFn f = __atomic_load_n(&g_libc_dlsym, __ATOMIC_ACQUIRE);
  if (f) return f;
  f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
  if (!f) f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
  __atomic_store_n(&g_libc_dlsym, f, __ATOMIC_RELEASE);
  return f;
}

}  // namespace callmon::rt
