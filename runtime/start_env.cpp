// The start-up environment from the initial process stack (see start_env.hpp).
#include "runtime/start_env.hpp"

#include <cstddef>

// Set by the dynamic loader before anything of the program runs, to the initial stack
// pointer: argc, argv[0..argc-1], NULL, envp..., NULL, auxv (the x86-64 ELF ABI's process
// start layout). Exported by ld.so; an `ld.so ./program` start has it adjusted so argc and
// argv are the program's.
extern "C" void* __libc_stack_end;

namespace callmon::rt {

char* const* start_environ() {
  auto* sp = static_cast<long*>(__libc_stack_end);
  if (!sp) return nullptr;
  long argc = sp[0];
  if (argc < 0 || argc > (1L << 24)) return nullptr;  // not the layout we expect
  char** argv = reinterpret_cast<char**>(sp + 1);
  if (argv[argc] != nullptr) return nullptr;
  return argv + argc + 1;
}

const char* start_env_get(const char* name) {
  // No strlen/strncmp: this may run before libc is initialised, and the program may
  // interpose them (runtime_scope.hpp).
  for (char* const* e = start_environ(); e && *e; ++e) {
    const char* a = *e;
    const char* b = name;
    while (*b && *a == *b) ++a, ++b;
    if (!*b && *a == '=') return a + 1;
  }
  return nullptr;
}

}  // namespace callmon::rt
