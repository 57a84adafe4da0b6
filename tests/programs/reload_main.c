/* dlclose of an instrumented library and dlopen of another that the loader maps at the same
 * address (reload_lib_a.c, reload_lib_b.c, built as libcmreload_a.so and libcmreload_b.so
 * next to this program), then the first one opened again: every call must be named from
 * the library that was mapped when it was made (issue 21, class 1). Prints whether the
 * loader did reuse the address, which the test needs to mean anything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static char g_dir[PATH_MAX];

/* Opens `lib`, calls its `entry`, closes it; returns the result, its load bias in *base. */
COUNTED int run_library(const char* lib, const char* entry, unsigned long* base) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", g_dir, lib);
  void* handle = dlopen(path, RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  struct link_map* map = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map) *base = map->l_addr;
  int (*fn)(int) = (int (*)(int))dlsym(handle, entry);
  int result = fn ? fn(3) : -1;
  dlclose(handle);
  return result;
}

int main(void) {
  ssize_t n = readlink("/proc/self/exe", g_dir, sizeof g_dir - 1);
  if (n <= 0) return 1;
  g_dir[n] = '\0';
  *strrchr(g_dir, '/') = '\0';
  unsigned long a = 0, b = 0, again = 0;
  int ra = run_library("libcmreload_a.so", "a_entry", &a);
  int rb = run_library("libcmreload_b.so", "b_entry", &b);
  int ra2 = run_library("libcmreload_a.so", "a_entry", &again);
  printf("results %d %d %d\n", ra, rb, ra2);
  printf("same address %s %s\n", a == b ? "yes" : "no", a == again ? "yes" : "no");
  return 0;
}
