/* A signal handler that interrupted callmon's exit trampoline, still running when the
 * detach begins (tests/attach/run_attach.py, case sigtramp; docs/patching.md "Attaching",
 * step 6). Built with sleds, -pg -mfentry, -pg, or no flag (attached with
 * --patch=^victim$).
 *
 * The main thread waits for a line on stdin (sent once `callmon record -p` has attached),
 * calls victim until its return address is no longer in the executable (the entry hook
 * redirected it to the runtime's exit trampoline, whose address it keeps), then sets the
 * trap flag and calls victim again: every instruction traps. The first trap at the
 * trampoline's first instruction -- victim has returned into it, the frame it will pop is
 * still on the runtime's shadow stack, no hook is running -- is the catch: the handler
 * clears the trap flag in its saved state, prints "caught" and waits until the detach's
 * first stop (a ptrace stop ends its sigtimedwait with EINTR: signal(7)), then returns into
 * the trampoline. Before, the detach
 * ended the recording at once (only each thread's current pc was looked at): the shadow
 * stack emptied, the trampoline found no frame and the program died of SIGILL ("a hijacked
 * return address is missing from the shadow stack"). Now the detach waits until the
 * handler has returned and the trampoline has finished. The main thread then waits for a
 * second line (sent once callmon has detached), makes a fixed number of calls and prints
 * their sum; status 0. "free" as argv[1]: only the sum. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))
/* Not instrumented in any build (and not selected by --patch=^victim$). */
#define UNTRACED \
  __attribute__((noinline, no_instrument_function, patchable_function_entry(0, 0)))

#include "trap_step.h"

extern char __executable_start[], etext[];

static volatile uintptr_t tramp;  /* the runtime's exit trampoline, as victim saw it */

NOINLINE long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

NOINLINE long victim(long i) {
  tramp = (uintptr_t)__builtin_return_address(0);
  return leaf(i) % 1000003;
}

/* System calls of its own: in the --patch build a call into libc goes through a
 * library-call probe, which the handler should not run. */
UNTRACED static long raw_syscall3(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}

/* Waits up to 60 s for a signal that never comes: returns at once when a ptrace stop
 * interrupts it (EINTR), as the detach's first stop does. */
UNTRACED static void until_stopped(void) {
  uint64_t set = 1ull << (SIGUSR2 - 1);
  struct timespec limit = {60, 0};
  register long size __asm__("r10") = 8;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"((long)SYS_rt_sigtimedwait), "D"(&set), "S"(0L), "d"(&limit), "r"(size)
                   : "rcx", "r11", "memory");
  (void)ret;
}

UNTRACED static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
}

UNTRACED static void say(const char* s) {
  long n = 0;
  while (s[n]) n++;
  raw_syscall3(SYS_write, 1, (long)s, n);
}

/* The catch: the first trap at the trampoline's first instruction. */
UNTRACED static int is_catch(const ucontext_t* uc) {
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] == tramp;
}

UNTRACED static void on_catch(ucontext_t* uc) {
  (void)uc;
  say("caught\n");
  until_stopped(); /* until the detach begins */
}

UNTRACED int main(int argc, char** argv) {
  const int free_run = argc > 1 && strcmp(argv[1], "free") == 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  install_trap_handler();
  printf("ready\n");
  long sum = 0;
  if (!free_run) {
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return 3;  /* the test's go, after the attach */
    for (int i = 0;; ++i) {
      sum += victim(i);
      if (tramp < (uintptr_t)__executable_start || tramp >= (uintptr_t)etext) break;
      if (i == 60000) {
        printf("victim's return was never redirected\n");
        return 2;
      }
      nap_ms(1);
    }
    start_stepping();
    sum += victim(1);
    if (!caught) {
      printf("no trap landed at the exit trampoline\n");
      return 2;
    }
    if (!fgets(line, sizeof line, stdin)) return 3;  /* the test's go, after the detach */
  }
  sum = 0;
  for (long i = 0; i < 100000; ++i) sum += victim(i);
  printf("sum %ld\n", sum);
  return 0;
}
