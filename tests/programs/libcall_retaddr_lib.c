// An uninstrumented library function that returns its own return address
// (tests/e2e/run_libcall.py, libcall_retaddr.c).
#include <stdint.h>

__attribute__((noinline)) uintptr_t libcall_retaddr(void) {
  return (uintptr_t)__builtin_return_address(0);
}
