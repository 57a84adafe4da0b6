/* A signal handler that leaves by siglongjmp in the window between a slow path's record and
 * the writer's update of its encoding state after it. Under callmon the test sets
 * TEST_CALLMON_RECORD_SIGNAL=SIGURG (runtime/core/test_signal.hpp): SIGURG arrives right
 * after each depth-0 record the writer's slow path copies (a full trace window, a PAUSE, a
 * clock delta off the clock's step). While a round runs, the handler jumps back to main's
 * loop and the hook is abandoned there; elsewhere it returns. Without callmon no signal
 * comes. step_a and step_b alternate, so a writer whose state missed the record encodes the
 * next calls against the wrong address tables, and the reader names other functions.
 * The program prints the calls whose bodies ran: a jump inside an entry hook records a call
 * whose body never ran, so the recording may count up to `jumps` more steps. */
#include <stdio.h>

#include "fixture.h"
#include "hook_signal.h"
#include "jump_rounds.h"

#define ROUNDS 40
#define STEPS_PER_ROUND 100000

static volatile long ran_a, ran_b, sink;

COUNTED void step_a(long i) {
  ran_a = ran_a + 1;
  sink = sink + i;
}

COUNTED void step_b(long i) {
  ran_b = ran_b + 1;
  sink = sink - i;
}

COUNTED void one_round(void) {
  for (long i = 0; i < STEPS_PER_ROUND; ++i) {
    step_a(i);
    step_b(i);
  }
}

NOT_INSTRUMENTED static void on_urg(int sig) {
  (void)sig;
  jump_out_of_round();
}

int main(void) {
  catch_hook_signal(on_urg);
  run_jump_rounds(ROUNDS, one_round);
  printf("rounds %d jumps %ld a %ld b %ld\n", ROUNDS, jumps, ran_a, ran_b);
  return 0;
}
