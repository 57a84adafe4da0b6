/* The recorded work and the signal handler that leaves it by siglongjmp, shared by the
 * attach fixtures whose SIGALRM handler abandons calls (attach_sigjmp.c, attach_sigwin.c):
 * deep(d, x) recurses d levels (each adding a leaf call) down to mid, fifty leaf calls;
 * handler counts its run in `hits`, calls leaf once, and when JUMP_NOW holds counts a jump
 * in `jumps` and leaves by siglongjmp(jump_back, 1).
 *
 * The including file defines first NOINLINE (keeps every call a call at -O2) and JUMP_NOW,
 * an expression read inside the handler after `hits` has counted this run (a macro, not a
 * function: an inlined function would still be a recorded call under
 * -finstrument-functions). The tests count these functions by name. */
#ifndef CALLMON_TEST_JUMP_HANDLER_H
#define CALLMON_TEST_JUMP_HANDLER_H

#include <setjmp.h>

#if !defined(NOINLINE) || !defined(JUMP_NOW)
#error "define NOINLINE and JUMP_NOW before including jump_handler.h"
#endif

static sigjmp_buf jump_back;
static volatile long hits, jumps;

NOINLINE long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

NOINLINE long mid(long x) {
  long s = 0;
  for (int i = 0; i < 50; i++) s += leaf(x + i);
  return s;
}

NOINLINE long deep(int d, long x) { return d ? deep(d - 1, x) + leaf(x) : mid(x); }

NOINLINE void handler(int sig) {
  (void)sig;
  hits++;
  leaf(hits);
  if (JUMP_NOW) {
    jumps++;
    siglongjmp(jump_back, 1);
  }
}

#endif
