// The C side of the library-call probes (docs/patching.md, "Library calls"): the common
// entry (arch/x86_64/libcall_entry.S) comes here with its stub's data and the call's
// return-address slot. The call is recorded like a -pg -mfentry function's (hooks_pg.cpp):
// an entry now, the return address redirected to callmon_pg_return, whose exit pops the
// frame; callbacks the library makes into instrumented code nest inside. As there, the
// probe's own code calls out only through slow_call (core/slow_call.hpp): the trampoline
// does not keep the vector state itself.
#include <cstdint>

#include "runtime/core/slow_call.hpp"

#include "runtime/core/sys.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/patching/got_redirect.hpp"
#include "runtime/patching/got_stub.hpp"

using namespace callmon::rt;

namespace {

// The thread's first probe: set it up here, so that a -finstrument-functions program whose
// first recorded call is a library call still calibrates its own hooks (the -pg entry's
// set-up would choose the -pg ones).
void libcall_thread_setup() {
  ErrnoSaver es;
  thread_setup();
}

}  // namespace

// Returned in rax:rdx (a struct of two integers): the function to go to, and whether the
// common entry is to call it (the slot now belongs to a new frame, and the calls are not
// an attach's: libcall_entry.S).
struct LibcallEnter {
  uintptr_t target;
  uintptr_t call;
};

extern "C" __attribute__((visibility("hidden"), no_instrument_function)) LibcallEnter
callmon_libcall_enter(const LibcallData* d, uintptr_t* slot, const uint64_t* saved) {
  if (__builtin_expect(t_state == nullptr, 0) && g_libcall_cyg_program && !in_runtime())
    slow_call(&libcall_thread_setup);
  const uintptr_t before = *slot;
  pg_enter_at(d->fn, slot, saved);
  return {d->target, (*slot != before) & g_libcall_calls};
}
