/* dlmopen of an instrumented shared library into a new link namespace (LM_ID_NEWLM): the
 * copy gets a libc of its own, to which its probes bind; the runtime redirects them (or
 * patches its sleds) so its calls are recorded as a dlopen'ed copy's, or says why not (a
 * `dlmopen-module` line). The program's output and status stay as without callmon. The
 * library is dlopen_plugin.c, built as libcmplugin.so next to this program. With the
 * argument `dlopen` it is loaded with plain dlopen instead (the counts to compare with);
 * with `twice` it is loaded, closed and loaded again (a second new namespace); with
 * `existing` it goes into a namespace made before for libm (dlinfo RTLD_DI_LMID); with
 * `churn`, while it is loaded the program opens, closes and opens libm again (a dlclose, then
 * a pass that looks at every module anew) and calls plugin_entry a second time; `lazy`
 * dlmopens it RTLD_LAZY (its GOT words not bound until called). A second
 * argument names another library file of that directory (dlmopen_plugin_jmp.c's). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static int g_plain;  // load with dlopen (the base namespace) instead
static Lmid_t g_lmid = LM_ID_NEWLM;  // or a namespace made before (`existing`)
static int g_churn;  // a dlclose and a dlopen of libm between two calls (`churn`)
static int g_mode = RTLD_NOW;  // RTLD_LAZY with `lazy` (a dlmopen: its words bound late)

COUNTED int load_in_namespace(const char* path) {
  void* handle = g_plain ? dlopen(path, g_mode) : dlmopen(g_lmid, path, g_mode);
  if (!handle) {
    fprintf(stderr, "dlmopen: %s\n", dlerror());
    return -1;
  }
  int (*entry)(int) = (int (*)(int))dlsym(handle, "plugin_entry");
  int result = entry ? entry(4) : -1;
  if (g_churn && entry) {
    void* m = dlopen("libm.so.6", RTLD_NOW);
    if (m) dlclose(m);
    m = dlopen("libm.so.6", RTLD_NOW);
    void* cosine = m ? dlsym(m, "cos") : NULL;  // the pass after the dlopen runs here
    if (entry(4) != result || !cosine) result = -2;
    if (m) dlclose(m);
  }
  dlclose(handle);
  return result;
}

COUNTED int after_load(int x) { return x * 2; }

int main(int argc, char** argv) {
  g_plain = argc > 1 && strcmp(argv[1], "dlopen") == 0;
  int rounds = argc > 1 && strcmp(argv[1], "twice") == 0 ? 2 : 1;
  g_churn = argc > 1 && strcmp(argv[1], "churn") == 0;
  if (argc > 1 && strcmp(argv[1], "lazy") == 0) g_mode = RTLD_LAZY;
  void* first = NULL;
  if (argc > 1 && strcmp(argv[1], "existing") == 0) {
    first = dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW);
    if (!first || dlinfo(first, RTLD_DI_LMID, &g_lmid) != 0) {
      fprintf(stderr, "dlmopen libm: %s\n", dlerror());
      return 1;
    }
  }
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0) return 1;
  path[n] = '\0';
  char* slash = strrchr(path, '/');
  const char* lib = argc > 2 ? argv[2] : "libcmplugin.so";
  if (strlen(lib) > 31 || strchr(lib, '/')) return 1;
  strcpy(slash + 1, lib);
  int r = 0;
  for (int i = 0; i < rounds; i++) r = load_in_namespace(path);
  printf("namespace plugin result %d, after %d\n", r, after_load(r));
  if (first) dlclose(first);
  return 3;
}
