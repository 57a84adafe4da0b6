/* The places a jump out of a signal handler puts PAD back (interpose_signal.cpp, PadSite)
 * must be of the current chunk, not of an earlier chunk mapped at the same address (chunk
 * k + 2 usually reuses chunk k's). Under callmon the test sets
 * TEST_CALLMON_HOOK_SIGNAL=SIGURG (runtime/core/test_signal.hpp): SIGURG arrives at every
 * chunk switch or window growth inside a hook. The first time the handler calls a function
 * and returns (nested records: the wrapper notes where they began, in chunk 0); every later
 * time, while a round runs, it leaves by siglongjmp, which puts the PAD back at the places
 * noted. Without callmon no signal comes. The program prints the calls whose bodies ran: a
 * jump inside an entry hook records a call whose body never ran. */
#include <stdio.h>

#include "fixture.h"
#include "hook_signal.h"
#include "jump_rounds.h"

#define ROUNDS 40
#define STEPS_PER_ROUND 1000000

static volatile long hits, ran, sink;

COUNTED void step(long i) {
  ran = ran + 1;
  sink = sink + i;
}

COUNTED void in_handler(void) { sink = sink + 1; }

COUNTED void one_round(void) {
  for (long i = 0; i < STEPS_PER_ROUND; ++i) step(i);
}

NOT_INSTRUMENTED static void on_urg(int sig) {
  (void)sig;
  hits = hits + 1;
  if (hits == 1) {
    in_handler();
    return;
  }
  jump_out_of_round();
}

int main(void) {
  catch_hook_signal(on_urg);
  run_jump_rounds(ROUNDS, one_round);
  printf("rounds %d hits %ld jumps %ld steps %ld\n", ROUNDS, hits, jumps, ran);
  return 0;
}
