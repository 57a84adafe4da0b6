/* A plugin for dlmopen_main.c (libcmplugin_ctor.so) that does what the plain one does not,
 * each on its own name so that the tests count it apart: its constructor calls
 * ctor_helper() three times (calls made inside the dlmopen itself); plugin_entry() loads
 * libcmplugin_inner.so (dlmopen_plugin_inner.c) from its own directory with its own
 * namespace's dlopen, calls its inner_entry through that namespace's dlsym and closes it;
 * and it calls getpid() through its PLT (a library call into its namespace's libc). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

#include "fixture.h"

static volatile int g_ctor_sum;

COUNTED int ctor_helper(int x) { return x * 3; }

__attribute__((constructor)) static void plugin_ctor(void) {
  for (int i = 0; i < 3; i++) g_ctor_sum += ctor_helper(i);
}

COUNTED int plugin_helper(int x) { return x + 1; }

int plugin_entry(int n) {
  int sum = g_ctor_sum;
  for (int i = 0; i < n; i++) sum += plugin_helper(i);
  void* h = dlopen("$ORIGIN/libcmplugin_inner.so", RTLD_NOW);
  if (!h) return -1000;
  int (*inner)(int) = (int (*)(int))dlsym(h, "inner_entry");
  sum += inner ? inner(n) : -100;
  dlclose(h);
  return sum + (getpid() > 0 ? 5 : 0);
}
