/* Record-time name filters (tests/e2e/fixtures/selection*.py): C++ names with a namespace
 * and a template (matched demangled), functions in a linked shared library (selection_lib.c,
 * built as libcmselection.so) and in a dlopen'd one (dlopen_plugin.c, libcmplugin.so). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

extern "C" int lib_twice(int x);

namespace shapes {
template <class T>
struct Box {
  T side;
  COUNTED T area() const { return side * side; }
};
}  // namespace shapes

COUNTED int leaf(int x) { return x + 1; }

COUNTED int middle(int x) {
  shapes::Box<int> b{x};
  return leaf(x) + b.area() + lib_twice(x);
}

COUNTED int outer(int n) {
  int sum = 0;
  for (int i = 0; i < n; i++) sum += middle(i);
  return sum;
}

COUNTED int load_plugin() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0) return -1;
  path[n] = '\0';
  strcpy(strrchr(path, '/') + 1, "libcmplugin.so");
  void* handle = dlopen(path, RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  int (*entry)(int) = (int (*)(int))dlsym(handle, "plugin_entry");
  int result = entry ? entry(2) : -1;
  dlclose(handle);
  return result;
}

int main() {
  printf("outer %d\n", outer(2));
  printf("plugin %d\n", load_plugin());
  return 0;
}
