/* vfork while attached (tests/attach/run_attach.py, case vfork): the main thread reads
 * requests from stdin, one per line, and answers each on stdout.
 *
 *   F <k>   vfork; the child calls child_leaf() k times, then _exit(0)s; the parent waits
 *           for it, calls parent_leaf() once, raises SIGUSR1 and answers "child 0 usr1 N"
 *           (N: how many times its handler has run)
 *   E       the same with a child that resets SIGUSR1 to SIG_DFL with sigaction (as gdb
 *           and CPython's subprocess do) and execs /bin/true after its calls
 *   Q       quit: exits with status 3
 *
 * Attached, the child's calls must not go into the parent's recording (the child shares
 * the parent's memory and thread state until it execs or exits): the attach redirects
 * vfork to the runtime's interposer, which keeps the hooks out of the child. Nor may the
 * child's sigaction touch the runtime's table of the program's handlers (the parent's
 * memory): it did, the parent's wrapper then called nothing and the detach gave the
 * kernel SIG_DFL, so the program died of its next SIGUSR1. Built like the server;
 * noinline keeps every call a call at -O2. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static volatile sig_atomic_t usr1s;

static void on_usr1(int sig) {
  (void)sig;
  usr1s++;
}

NOINLINE long child_leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 5 + 1;
}

NOINLINE long parent_leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  printf("ready\n");
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] == 'Q') break;
    long k = line[0] == 'F' ? atol(line + 1) : 10;
    pid_t pid = vfork();
    if (pid == 0) {
      long s = 0;
      for (long i = 0; i < k; ++i) s += child_leaf(i);
      sink = s;
      if (line[0] == 'E') {
        struct sigaction dfl = {0};
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGUSR1, &dfl, NULL);
        char* argv[] = {"true", NULL};
        execv("/bin/true", argv);
      }
      _exit(0);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    sink += parent_leaf(k);
    raise(SIGUSR1);
    printf("child %d usr1 %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, (int)usr1s);
  }
  return 3;
}
