/* dlopen of an instrumented shared library (dlopen_plugin.c, built as libcmplugin.so next
 * to this program): the plugin's functions must be named in the trace. The library is
 * closed again before the end, so names must come from what was recorded at load time. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

COUNTED int load_and_run(const char* path) {
  void* handle = dlopen(path, RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  int (*entry)(int) = (int (*)(int))dlsym(handle, "plugin_entry");
  int result = entry ? entry(4) : -1;
  dlclose(handle);
  return result;
}

int main(void) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0) return 1;
  path[n] = '\0';
  char* slash = strrchr(path, '/');
  strcpy(slash + 1, "libcmplugin.so");
  printf("plugin result %d\n", load_and_run(path));
  return 0;
}
