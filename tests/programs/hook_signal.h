/* The signal the exit-in-handler fixtures (tests/programs/exit_in_handler.c,
 * pthread_exit_in_handler.c, tests/attach/attach_exit.c) take inside one of callmon's
 * hooks: their tests run them with TEST_CALLMON_HOOK_SIGNAL=SIGURG
 * (runtime/core/test_signal.hpp), which delivers SIGURG at a chunk switch inside a hook;
 * without callmon the program raises it itself. record_jump.c's test sets
 * TEST_CALLMON_RECORD_SIGNAL=SIGURG, delivered after a slow path's record. */
#ifndef CALLMON_TEST_HOOK_SIGNAL_H
#define CALLMON_TEST_HOOK_SIGNAL_H

#include <signal.h>
#include <string.h>

#include "fixture.h"

/* Installs `handler` for SIGURG (SA_RESTART, no SA_SIGINFO). Inlined into its caller and
 * never instrumented: no call of its own in any hook mode or under --patch. */
__attribute__((always_inline)) NOT_INSTRUMENTED static inline void catch_hook_signal(
    void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGURG, &sa, 0);
}

#endif
