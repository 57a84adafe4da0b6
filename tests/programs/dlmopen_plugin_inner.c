/* The library dlmopen_plugin_ctor.c loads itself with dlopen (libcmplugin_inner.so): into
 * its own link namespace when the plugin was dlmopen'ed. inner_entry(n) calls inner_helper()
 * n times. */
#include "fixture.h"

COUNTED int inner_helper(int x) { return 2 * x; }

int inner_entry(int n) {
  int sum = 0;
  for (int i = 0; i < n; i++) sum += inner_helper(i);
  return sum;
}
