// glibc's own forced unwinds (pthread_exit, and thread cancellation at a cancellation point
// or in its SIGCANCEL handler) call libgcc_s's _Unwind_ForcedUnwind through a pointer glibc
// looked up itself (__libc_unwind_link_get: dlopen of libgcc_s.so.1, then dlsym on that
// handle, whose scope is libgcc_s and its dependencies), never through a PLT: the runtime's
// interposed _Unwind_ForcedUnwind (interpose_exceptions.cpp), which puts the redirected
// return addresses back first, is not reached. The unwinder then meets a return address the
// runtime redirected (a library call's, or a -pg frame's with no landing pad before it),
// ends its walk there, and glibc jumps straight to the thread's start: the C++ destructors
// of every frame above were skipped (a thread cancelled in `read` recorded with library
// calls on, the default, lost its RAII cleanups).
//
// So at start-up the runtime has glibc fill its table now and replaces the table's pointer
// to libgcc_s's _Unwind_ForcedUnwind with its own interposer, which calls libgcc_s's. glibc
// keeps the pointers mangled with the thread pointer guard (PTR_MANGLE) in some versions and
// plain in others; the word is found by value among the table's first words, either way,
// so a table laid out differently is left alone rather than written over.
#include <dlfcn.h>
#include <unwind.h>

#include <cstdint>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/interposers/interpose.hpp"

extern "C" _Unwind_Reason_Code _Unwind_ForcedUnwind(_Unwind_Exception*, _Unwind_Stop_Fn, void*);

namespace callmon::rt {
namespace {

// glibc's PTR_MANGLE on x86-64: xor with the guard at %fs:0x30, rotate left by 17.
uintptr_t ptr_mangle(uintptr_t p) {
  uintptr_t guard;
  asm("mov %%fs:0x30, %0" : "=r"(guard));
  p ^= guard;
  return (p << 17) | (p >> 47);
}

// Words of glibc's struct unwind_link searched (it has 6 to 8 pointers).
constexpr int kLinkWords = 12;

}  // namespace

bool redirect_libc_forced_unwind() {
  RuntimeScope rs;  // dlopen and dlsym allocate with the program's malloc
  using LinkGet = void* (*)();
  auto link_get = reinterpret_cast<LinkGet>(dlsym(RTLD_DEFAULT, "__libc_unwind_link_get"));
  if (!link_get) return false;  // another C library, or a glibc before 2.34
  auto* link = static_cast<uintptr_t*>(link_get());
  if (!link) return false;  // no libgcc_s.so.1 on this system
  void* gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!gcc) return false;
  auto real = reinterpret_cast<uintptr_t>(dlsym(gcc, "_Unwind_ForcedUnwind"));
  dlclose(gcc);  // still loaded: glibc holds its own reference
  if (!real) return false;
  if (!g_real.forced_unwind)
    g_real.forced_unwind = reinterpret_cast<decltype(g_real.forced_unwind)>(real);
  const auto own = reinterpret_cast<uintptr_t>(&::_Unwind_ForcedUnwind);
  if (own == real) return false;
  for (int i = 0; i < kLinkWords; ++i) {
    // Written while the program has one thread (the library's constructor); glibc only
    // reads the table once it is published.
    if (link[i] == ptr_mangle(real)) {
      link[i] = ptr_mangle(own);
      return true;
    }
    if (link[i] == real) {
      link[i] = own;
      return true;
    }
  }
  return false;
}

}  // namespace callmon::rt
