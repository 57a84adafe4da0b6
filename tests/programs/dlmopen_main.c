/* dlmopen of an instrumented shared library into a new link namespace (LM_ID_NEWLM): the
 * copy gets a libc of its own, whose __cyg_profile_func_enter does nothing, so its calls
 * are not recorded. callmon must say so (a `dlmopen-module` line; info and the end of
 * record name it); the program's output and status stay as without callmon. The library
 * is dlopen_plugin.c, built as libcmplugin.so next to this program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

COUNTED int load_in_namespace(const char* path) {
  void* handle = dlmopen(LM_ID_NEWLM, path, RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlmopen: %s\n", dlerror());
    return -1;
  }
  int (*entry)(int) = (int (*)(int))dlsym(handle, "plugin_entry");
  int result = entry ? entry(4) : -1;
  dlclose(handle);
  return result;
}

COUNTED int after_load(int x) { return x * 2; }

int main(void) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0) return 1;
  path[n] = '\0';
  char* slash = strrchr(path, '/');
  strcpy(slash + 1, "libcmplugin.so");
  int r = load_in_namespace(path);
  printf("namespace plugin result %d, after %d\n", r, after_load(r));
  return 3;
}
