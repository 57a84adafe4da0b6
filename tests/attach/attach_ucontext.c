/* ucontext coroutines attached to (tests/attach/run_attach.py, case ucontext): the main
 * thread reads requests from stdin, one per line, and answers each on stdout.
 *
 *   S <k>   k rounds: main switches (swapcontext) to coroutine 0, which calls leaf and
 *           switches to coroutine 1, which calls leaf and switches back to main. Exactly
 *           3k calls of yield_to and 2k of leaf per request; between requests both
 *           coroutines stay suspended inside yield_to (body -> yield_to on their own stacks)
 *   A       answers where each coroutine's live stack is: "stacks SP0 END0 SP1 END1" (hex;
 *           from the stack pointer its context saved to the end of its stack)
 *   Q       quit: prints the total and exits with status 3
 *
 * Attached, a switch must keep every context's own frames (the runtime's swapcontext
 * interposer, through the GOT word the attach redirects): before it, a -pg or `--patch`
 * return in a resumed coroutine met the other stack's frames and the program died of
 * SIGILL. Detached while both coroutines are suspended, their redirected return addresses
 * must be put back before the detach ends (the test reads the suspended stacks after it):
 * none may still hold the runtime's exit trampoline. noinline keeps every call a call at -O2. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))

static ucontext_t main_ctx, co_ctx[2];
static long total;

NOINLINE long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return (x * 2 + 1) & 15;
}

NOINLINE void yield_to(int from, int to) {
  swapcontext(from < 0 ? &main_ctx : &co_ctx[from], to < 0 ? &main_ctx : &co_ctx[to]);
}

NOINLINE void body(int me) {
  for (long i = 0;; i++) {
    total += leaf(i + me);
    yield_to(me, me == 0 ? 1 : -1);
  }
}

NOINLINE void co0(void) { body(0); }
NOINLINE void co1(void) { body(1); }

static char stacks[2][65536];

int main(void) {
  void (*entry[2])(void) = {co0, co1};
  for (int i = 0; i < 2; ++i) {
    getcontext(&co_ctx[i]);
    co_ctx[i].uc_stack.ss_sp = stacks[i];
    co_ctx[i].uc_stack.ss_size = sizeof stacks[i];
    co_ctx[i].uc_link = &main_ctx;
    makecontext(&co_ctx[i], entry[i], 0);
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] == 'Q') break;
    if (line[0] == 'A') {
      printf("stacks");
      for (int i = 0; i < 2; ++i)
        printf(" %llx %llx", (unsigned long long)co_ctx[i].uc_mcontext.gregs[REG_RSP],
               (unsigned long long)(uintptr_t)(stacks[i] + sizeof stacks[i]));
      printf("\n");
      continue;
    }
    long k = atol(line + 1);
    for (long r = 0; r < k; ++r) yield_to(-1, 0);
    printf("ok %ld\n", total);
  }
  printf("total %ld\n", total);
  return 3;
}
