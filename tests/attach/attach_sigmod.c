/* A quiet program that loads, while `callmon record -p` is attached, plugins whose
 * constructor installs a signal handler (attach_sigplugin.c; tests/attach/run_attach.py,
 * case sigmod; docs/patching.md, "Modules loaded while attached").
 *
 * Between requests the program only waits in read(2): it records next to nothing, so no
 * chunk switch of its own ever asks for a pass. Before, a module it loaded behind the
 * wrappers' back (L) was never patched nor its handler wrapped, and the handler a
 * module's constructor installs was left unwrapped even for a module loaded through the
 * redirected dlopen (O): with TEST_CALLMON_HOOK_SIGNAL=SIGUSR1 the handler then leaves a
 * hook by siglongjmp with its busy count left behind (records lost, the detach waiting for
 * a thread "inside a hook").
 *
 * Requests, one per line on stdin, answers on stdout:
 *   O <path>  dlopen (through the program's GOT word: the runtime's wrapper while
 *             attached) and dlsym of the plugin; "opened"
 *   L <path>  the same through pointers to dlopen and dlsym taken at the start (behind
 *             the wrappers' back); "loaded"
 *   K         SIGUSR1's action: "kernel: plugin's handler" or "kernel: other" (the
 *             runtime's wrapper), and what sigaction shows ("view: plugin's" or "other")
 *   C <k>     plugin_run(k) of the last plugin loaded; "run <sum>"
 *   R <n>     plugin_sig_work(n): "work <sum>"
 *   Q         exits with status 3 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void* (*volatile early_dlopen)(const char*, int);
static void* (*volatile early_dlsym)(void*, const char*);

static long (*run)(long);
static long (*work)(long);
static void* handler;

/* The kernel's view of a signal's action (struct kernel_sigaction's first word). */
static void* kernel_handler(int sig) {
  struct {
    void* handler;
    unsigned long flags;
    void* restorer;
    unsigned long mask;
  } k;
  if (syscall(SYS_rt_sigaction, sig, NULL, &k, 8) != 0) return NULL;
  return k.handler;
}

static int load(const char* path, int late) {
  void* h = late ? early_dlopen(path, RTLD_NOW) : dlopen(path, RTLD_NOW);
  if (!h) return -1;
  void* (*sym)(void*, const char*) = late ? early_dlsym : dlsym;
  run = (long (*)(long))sym(h, "plugin_run");
  work = (long (*)(long))sym(h, "plugin_sig_work");
  handler = sym(h, "plugin_sig_handler");
  return run && work && handler ? 0 : -1;
}

int main(void) {
  early_dlopen = dlopen;
  early_dlsym = dlsym;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (line[0] == 'Q') break;
    if (line[0] == 'O' || line[0] == 'L') {
      int st = load(line + 2, line[0] == 'L');
      printf("%s\n", st ? "load failed" : line[0] == 'L' ? "loaded" : "opened");
    } else if (line[0] == 'K') {
      struct sigaction now;
      sigaction(SIGUSR1, NULL, &now);
      printf("kernel: %s, view: %s\n",
             kernel_handler(SIGUSR1) == handler ? "plugin's handler" : "other",
             (void*)now.sa_handler == handler &&
                     (now.sa_flags & (SA_SIGINFO | SA_RESTART)) == SA_RESTART
                 ? "plugin's" : "other");
    } else if (line[0] == 'C' && run) {
      printf("run %ld\n", run(atol(line + 1)));
    } else if (line[0] == 'R' && work) {
      printf("work %ld\n", work(atol(line + 1)));
    } else {
      printf("?\n");
    }
  }
  return 3;
}
