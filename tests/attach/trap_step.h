/* Single-stepping by the trap flag, shared by the attach fixtures that catch one chosen
 * instruction with a signal handler (attach_sigtramp.c, attach_sigsled.c): once
 * start_stepping() has set the trap flag, every instruction raises SIGTRAP; on_trap lets
 * the flag stand (the next instruction traps too) until a trap is the catch, then clears it
 * in the saved state, sets `caught` and runs the fixture's on_catch.
 *
 * The including file defines first UNTRACED, the attributes that keep a function out of
 * every instrumentation its builds use (the handler must not run a hook, nor give the
 * attach a site to patch), then, anywhere in the file, the two functions declared below:
 *   is_catch(uc)  whether the trap whose saved state is uc is the one to catch;
 *   on_catch(uc)  what the handler does at the catch (the trap flag is already cleared).
 * Both run inside the SIGTRAP handler: async-signal-safe code only. */
#ifndef CALLMON_TEST_TRAP_STEP_H
#define CALLMON_TEST_TRAP_STEP_H

#include <signal.h>
#include <string.h>
#include <ucontext.h>

#ifndef UNTRACED
#error "define UNTRACED before including trap_step.h"
#endif

#define TRAP_FLAG 0x100L /* EFLAGS.TF: a debug trap after each instruction */

static volatile int caught; /* the catch has happened */
static long traps;          /* traps before it */

UNTRACED static int is_catch(const ucontext_t* uc);
UNTRACED static void on_catch(ucontext_t* uc);

/* The SIGTRAP handler. The kernel clears the trap flag on the handler's entry (the handler
 * itself is not stepped) and puts back the saved flags at its return: clearing the flag
 * there ends the stepping. After ten million traps without the catch it gives up (the
 * fixture then says no trap was caught). */
UNTRACED static void on_trap(int sig, siginfo_t* si, void* ctx) {
  (void)sig, (void)si;
  ucontext_t* uc = (ucontext_t*)ctx;
  if (caught) {
    uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG; /* a stray trap after the catch */
    return;
  }
  if (!is_catch(uc)) {
    if (++traps > 10000000) uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG; /* give up */
    return; /* the trap flag stays: the next instruction traps too */
  }
  caught = 1;
  uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG;
  on_catch(uc);
}

/* Installs on_trap as SIGTRAP's handler (SA_SIGINFO | SA_RESTART). Call it before the
 * attach, from normal code. */
UNTRACED static void install_trap_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGTRAP, &sa, NULL);
}

/* Sets the trap flag: from the next instruction on, each one raises SIGTRAP. */
UNTRACED static void start_stepping(void) {
  __asm__ volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
}

#endif
