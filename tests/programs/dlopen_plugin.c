/* The shared library that dlopen_main.c loads: plugin_entry(n) calls plugin_helper() n
 * times. */
#include "fixture.h"

COUNTED int plugin_helper(int x) { return x + 1; }

int plugin_entry(int n) {
  int sum = 0;
  for (int i = 0; i < n; i++) sum += plugin_helper(i);
  return sum;
}
