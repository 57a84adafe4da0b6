/* Rounds that a signal handler may leave by siglongjmp, for the fixtures whose handler
 * abandons one of callmon's hooks (record_jump.c, pad_site_chunks.c): run_jump_rounds runs
 * `round` `rounds` times, each from a sigsetjmp; the handler calls jump_out_of_round, which
 * jumps back there while a round runs and returns otherwise. `jumps` counts the jumps. */
#ifndef CALLMON_TEST_JUMP_ROUNDS_H
#define CALLMON_TEST_JUMP_ROUNDS_H

#include <setjmp.h>
#include <signal.h>

#include "fixture.h"

static sigjmp_buf round_env;
static volatile sig_atomic_t round_running;
static volatile long jumps;

NOT_INSTRUMENTED static void jump_out_of_round(void) {
  if (!round_running) return;
  round_running = 0;
  jumps = jumps + 1;
  siglongjmp(round_env, 1);
}

NOT_INSTRUMENTED static void run_jump_rounds(int rounds, void (*round)(void)) {
  for (int r = 0; r < rounds; ++r) {
    if (sigsetjmp(round_env, 1) == 0) {
      round_running = 1;
      round();
    }
    round_running = 0;
  }
}

#endif
