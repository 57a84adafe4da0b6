// dlsym: runs the nop-sled pass a dlopen asked for (sled_patch.hpp) before the program can
// get a function pointer into the new module. See arch/x86_64/dl_trampolines.S.
#include <dlfcn.h>

#include "runtime/core/clock.hpp"
#include "runtime/core/libc_dlsym.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/patching/sled_patch.hpp"

// Not instrumented when the runtime is built with ThreadSanitizer (tests/tsan): TSan's own
// start-up looks its interceptors up through dlsym, i.e. through here, before it can take
// the function-entry events instrumentation would send it (it crashed in __tsan_func_entry).
#define CALLMON_NO_TSAN __attribute__((no_sanitize("thread")))

// Called by the dlsym trampoline with dlsym's arguments still in their registers (saved
// by the trampoline); returns the real dlsym to jump to.
extern "C" __attribute__((visibility("hidden"))) CALLMON_NO_TSAN void* callmon_before_dlsym() {
  if (__atomic_load_n(&callmon::rt::g_sled_pass_pending, __ATOMIC_ACQUIRE)) {
    // The pass is the recorder's time, not the caller's: a PAUSE.
    callmon::rt::RuntimeScope rs;
    uint64_t from = callmon::rt::read_ticks();
    callmon::rt::sled_patch_pending();
    callmon::rt::note_pause(from, callmon::rt::read_ticks());
  }
  return reinterpret_cast<void*>(callmon::rt::libc_dlsym());
}
