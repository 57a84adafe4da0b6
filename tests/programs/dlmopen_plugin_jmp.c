/* A plugin for dlmopen_main.c that longjmps out of its own helper (built as
 * libcmplugin_jmp.so): loaded into another namespace, its longjmp is that namespace's libc's,
 * which the runtime does not interpose, so the modes that hijack return addresses (-pg,
 * -pg -mfentry, nop sleds, --patch) leave it unrecorded and say so (dlmopen-module line);
 * -finstrument-functions and XRay record it. plugin_entry(4) returns 107. */
#include <setjmp.h>

#include "fixture.h"

static jmp_buf g_env;

COUNTED int plugin_helper(int x) {
  if (x == 2) longjmp(g_env, 1);
  return x + 1;
}

int plugin_entry(int n) {
  volatile int sum = 0;
  for (volatile int i = 0; i < n; i++) {
    if (setjmp(g_env) == 0) sum += plugin_helper(i);
    else sum += 100;
  }
  return sum;
}
