/* The plugin attach_server.c dlopen's on its `P <k>` request (tests/attach/run_attach.py,
 * case dlopen): plugin_run(k) calls libc's strlen once and plugin_step(i) for i < k, each
 * step calls plugin_leaf once: exactly 1 + 2k calls of the plugin's functions and one
 * library call per request. Built as the server is (sleds, -pg, -fi, or no flag). */
#include <string.h>

#define NOINLINE __attribute__((noinline))

char plugin_text[16] = "plugin";  /* not const: strlen stays a call */

static NOINLINE long plugin_leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 5 + 2;
}

static NOINLINE long plugin_step(long i) { return plugin_leaf(i) % 10007; }

long plugin_run(long k) {
  long sum = (long)strlen(plugin_text);
  for (long i = 0; i < k; ++i) sum += plugin_step(i);
  return sum;
}
