/* A C++ plugin for dlmopen_main.c whose helper throws through its own frames to
 * plugin_entry's catch (built as libcmplugin_throw.so). Loaded into another namespace, the
 * throw runs on that namespace's libstdc++ and unwinder, which find no unwind entry for the
 * runtime's return trampoline: with the return of plugin_helper hijacked (-pg, -pg -mfentry,
 * nop sleds, --patch) the program ended in std::terminate, so those modes leave the module
 * alone and say so; -finstrument-functions and XRay record it. plugin_entry(4) returns 107. */
#include "fixture.h"

extern "C" {

COUNTED int plugin_helper(int x) {
  if (x == 2) throw x;
  return x + 1;
}

int plugin_entry(int n) {
  int sum = 0;
  for (int i = 0; i < n; i++) {
    try {
      sum += plugin_helper(i);
    } catch (int) {
      sum += 100;
    }
  }
  return sum;
}

}  // extern "C"
