/* A signal handler installed through libc while `callmon record -p` attaches
 * (tests/attach/run_attach.py, case sigwin; docs/patching.md "Attaching", step 4).
 *
 * At the start the program starts a thread that installs SIGALRM's handler again and again
 * (every 20 us) through the program's GOT word of sigaction, for as long as that word is
 * libc's sigaction: until the attach redirects it to the runtime's interposer. Its last
 * install went to libc while the attach was being set up (or was under way in libc when
 * the attach stopped the threads). Before, the attach wrapped the installed handlers at
 * its start, milliseconds before it redirected the GOT words with every thread stopped:
 * the installs in between put the program's handler back in the kernel, and it stayed
 * unwrapped for the whole attach. Now the wrap comes at that stop, after the redirection
 * (a thread inside libc's sigaction first stepped out of it), so the last install is
 * wrapped too.
 *
 * The test runs it with TEST_CALLMON_HOOK_SIGNAL=SIGALRM (runtime/core/test_signal.hpp):
 * each chunk switch inside a hook delivers SIGALRM there, and the handler leaves by
 * siglongjmp while a request runs. Unwrapped, the abandoned hook's busy count stays:
 * every later record is nested, then lost, and the detach waits for a thread "inside a
 * hook" until it gives up.
 *
 * Requests, one per line on stdin, answers on stdout:
 *   W      waits for the thread: "installed" (on stderr how many installs it made
 *          through libc, and where the GOT word led then)
 *   K      the kernel's action for SIGALRM: "kernel: program's handler" or "kernel: other"
 *          (the runtime's wrapper while attached), and what sigaction shows ("view: ours"
 *          or "view: other")
 *   R <n>  n calls of deep(20, i), the handler armed: a jump restarts the call it
 *          abandoned; answers "done <sum>", the same with and without jumps
 *   Q      exits with status 3
 * "free" as argv[1]: the thread installs once (the run without attach). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define JUMP_NOW armed /* every run of the handler jumps while an R request runs */

static volatile int armed;

#include "jump_handler.h"

static const char* via = "?";

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

typedef int (*sigaction_fn)(int, const struct sigaction*, struct sigaction*);

/* The program's GOT word of sigaction, read now (the compiler may not keep it). */
static sigaction_fn got_sigaction(void) {
  void* p;
  __asm__ volatile("mov sigaction@GOTPCREL(%%rip), %0" : "=r"(p));
  return (sigaction_fn)p;
}

static long through_libc;  /* installs made through libc's sigaction */

static void* installer(void* arg) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  const sigaction_fn libc = got_sigaction();
  if (!*(const int*)arg) {
    libc(SIGALRM, &sa, NULL);
    via = "libc";
    return NULL;
  }
  /* Short sleeps, not a busy loop, and real-time priority where permitted: a thread that
   * has spun for seconds waits its turn behind every other runnable task on a loaded
   * machine and could miss the few milliseconds between the attach's start and its stop;
   * one that wakes from a sleep at real-time priority runs at once. A futex wait, not
   * nanosleep: callmon calls into a thread blocked in a sleep rather than the main
   * thread, and this one must run while the attach is set up. */
  struct sched_param prio = {.sched_priority = 1};
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &prio) != 0)
    fprintf(stderr, "no real-time priority\n");
  static int never;
  const struct timespec nap = {0, 20000};
  for (;;) {
    /* A plain call, through the PLT, as compiled code makes it: one indirect jump reads the
     * GOT word and enters what it names, so no stop of the attach comes between the read
     * and libc. (The word read into a register, compared, then called, as before, had a
     * window of its own: a stop between the read and the call let that install reach libc
     * after the wrap, a pointer to libc's sigaction kept across the stop, which no attach
     * can see: 1 CI run in ~40.) */
    sigaction(SIGALRM, &sa, NULL);
    if (got_sigaction() != libc) break;  /* the attach redirected it: this install was the last */
    through_libc++;
    syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, &nap, NULL, 0);
  }
  Dl_info di;
  sigaction_fn p = got_sigaction();
  via = dladdr((void*)p, &di) && di.dli_fname && strstr(di.dli_fname, "libcallmon")
            ? "libc, then the GOT word led to callmon"
            : "libc, then the GOT word changed to something else";
  return NULL;
}

int main(int argc, char** argv) {
  static int hold;
  hold = !(argc > 1 && strcmp(argv[1], "free") == 0);
  pthread_t t;
  if (pthread_create(&t, NULL, installer, &hold) != 0) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] == 'Q') break;
    if (line[0] == 'W') {
      pthread_join(t, NULL);
      fprintf(stderr, "%ld installs through %s\n", through_libc, via);
      printf("installed\n");
    } else if (line[0] == 'K') {
      struct sigaction now;
      sigaction(SIGALRM, NULL, &now);
      printf("kernel: %s, view: %s\n",
             kernel_handler(SIGALRM) == (void*)handler ? "program's handler" : "other",
             now.sa_handler == handler && (now.sa_flags & (SA_SIGINFO | SA_RESTART)) == SA_RESTART
                 ? "ours" : "other");
    } else if (line[0] == 'R') {
      volatile long n = atol(line + 1), i = 0, sum = 0;
      sigsetjmp(jump_back, 1);
      armed = 1;
      for (; i < n; i++) {
        long v = deep(20, i);
        sum += v;  /* after the call: a jump out of it redoes the whole call */
      }
      armed = 0;
      printf("done %ld\n", (long)sum);
    }
  }
  return 3;
}
