/* The plugin attach_sigmod.c loads while `callmon record -p` is attached
 * (tests/attach/run_attach.py, case sigmod). Its constructor installs SIGUSR1's handler
 * through its own GOT word of sigaction: that word is libc's while the constructor runs
 * (the attach's pass for the module comes after the loader is done), so the handler goes
 * to the kernel unwrapped unless the pass wraps it (docs/patching.md, "Modules loaded
 * while attached").
 *   plugin_run(k)        strlen once, plugin_step(i) for i < k, each plugin_leaf once:
 *                        exactly 1 + 2k calls of the plugin's functions
 *   plugin_sig_work(n)   n calls of plugin_deep(20, i) with the handler armed: the handler
 *                        leaves by siglongjmp, back here, and the call it abandoned is made
 *                        again; the sum is the same with and without jumps
 *   plugin_sig_handler   the handler (for the program to compare with the kernel's)
 * Built as the program is (sleds, -pg, -fi, XRay or no flag). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

char plugin_text[16] = "plugin";  /* not const: strlen stays a call */

static sigjmp_buf back;
static volatile int armed;
static volatile long hits;

void plugin_sig_handler(int sig) {
  (void)sig;
  hits++;
  if (armed) siglongjmp(back, 1);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = plugin_sig_handler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
}

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

static NOINLINE long plugin_mid(long x) {
  long s = 0;
  for (int i = 0; i < 50; i++) s += plugin_leaf(x + i);
  return s;
}

static NOINLINE long plugin_deep(int d, long x) {
  return d ? plugin_deep(d - 1, x) + plugin_leaf(x) : plugin_mid(x);
}

long plugin_sig_work(long n) {
  volatile long i = 0, sum = 0;
  sigsetjmp(back, 1);
  armed = 1;
  for (; i < n; i++) {
    long v = plugin_deep(20, i);
    sum += v; /* after the call: a jump out of it redoes the whole call */
  }
  armed = 0;
  return sum;
}
