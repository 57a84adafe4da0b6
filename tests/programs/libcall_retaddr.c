// Where a recorded library call returns to (tests/e2e/run_libcall.py): the library function
// (libcall_retaddr_lib.c, called through the PLT) reports its return address, and this
// program prints what it is: "plain" when it is the program's own (not recorded, or
// --no-libcall), "called" when it is the library-call entry's return point in
// libcallmon.so (21 modulo 64: the entry called the function, libcall_entry.S), and
// "redirected" when it is another address there (the -pg exit trampoline).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

uintptr_t libcall_retaddr(void);

int main(void) {
  uintptr_t r = libcall_retaddr();
  Dl_info info;
  const char* what = "elsewhere";
  if (dladdr((void*)r, &info) && info.dli_fname) {
    if (strstr(info.dli_fname, "libcallmon")) what = (r & 63) == 21 ? "called" : "redirected";
    else if (dladdr((void*)&main, &info) && r > (uintptr_t)&main && r < (uintptr_t)&main + 4096)
      what = "plain";
  }
  printf("return %s\n", what);
  return 0;
}
