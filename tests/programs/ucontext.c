/* ucontext coroutines (makecontext/swapcontext/setcontext): main and two coroutines on their
 * own stacks yield in a ring (main -> co0 -> co1 -> main) three times; main resumes co0 once
 * more and co0's function returns, which ends its context through uc_link (glibc switches
 * to main without the PLT); co1 is left suspended in yield_to() at exit. Then a third
 * context runs finisher(), which leaves through setcontext() from jump_back() and never
 * returns. Every context must keep its own calls: under callmon the program behaves as
 * without it, and each context's calls form their own tree. */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include "fixture.h"

#define ROUNDS 3

static ucontext_t main_ctx, co_ctx[2], fin_ctx;
static char stacks[3][65536];
static long total;

COUNTED long leaf(long x) { return x * 2 + 1; }

COUNTED void yield_to(ucontext_t* from, ucontext_t* to) {
  if (swapcontext(from, to) != 0) abort();
}

COUNTED void body(int me) {
  for (int i = 0; i < ROUNDS; i++) {
    total += leaf(i + 10 * me);
    yield_to(&co_ctx[me], me == 0 ? &co_ctx[1] : &main_ctx);
  }
}

COUNTED void co0(void) { body(0); }
COUNTED void co1(void) { body(1); }

COUNTED void jump_back(void) { setcontext(&main_ctx); }

COUNTED void finisher(void) {
  total += leaf(100);
  jump_back();
}

static void make(ucontext_t* uc, char* stack, void (*fn)(void)) {
  if (getcontext(uc) != 0) abort();
  uc->uc_stack.ss_sp = stack;
  uc->uc_stack.ss_size = sizeof stacks[0];
  uc->uc_link = &main_ctx;
  makecontext(uc, fn, 0);
}

int main(void) {
  make(&co_ctx[0], stacks[0], co0);
  make(&co_ctx[1], stacks[1], co1);
  make(&fin_ctx, stacks[2], finisher);
  for (int i = 0; i <= ROUNDS; i++) yield_to(&main_ctx, &co_ctx[0]);
  yield_to(&main_ctx, &fin_ctx);
  total += leaf(1000);
  printf("total %ld\n", total);
  return 0;
}
