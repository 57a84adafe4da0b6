/* A signal handler that interrupted a patched XRay sled, still running at the detach
 * (tests/attach/run_attach.py, case sigsled; docs/patching.md "Attaching", step 6). Built
 * with clang -fxray-instrument -fxray-instruction-threshold=1.
 *
 * The main thread waits for a line on stdin (the test sends it once `callmon record -p` has
 * attached), checks that the sleds are patched, then single-steps itself: it sets the trap
 * flag, so every instruction it executes raises SIGTRAP. The first trap whose saved pc lies
 * between a patched sled's `mov $id, %r10d` (41 ba + 4 bytes) and its call or jmp (e8/e9)
 * -- which can only be while callmon is attached, and comes at the first sled the call
 * reaches -- is the catch: that handler clears the trap flag in its saved state, prints
 * "caught" and waits (polling the sled's bytes) until the sled is compiled again, that is
 * until callmon has detached. It then reads its saved pc again: callmon must have moved it
 * to where the compiled sled goes (past an entry sled, to an exit sled's `ret`); left where
 * it was, the handler would return into the middle of the compiled sled's nops. It prints
 * where it returns to ("past the sled", "to the ret") or "left inside the sled" and exits 1
 * then. The main thread then makes a fixed number of calls and prints their sum; status 0.
 * Stepping makes the window certain whatever the machine's load (a second thread sending
 * signals at random hit this one-instruction window only by luck).
 * Without an attach ("free" as argv[1]) it steps nothing and prints only the sum. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define UNTRACED __attribute__((xray_never_instrument, noinline))

#include "trap_step.h"

extern char __executable_start[], etext[];

NOINLINE long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

NOINLINE long step(long i) { return leaf(i) % 1000003; }

/* The catch: a trap inside a patched sled, between its `mov $id, %r10d` and its call. */
UNTRACED static int is_catch(const ucontext_t* uc) {
  const uint8_t* pc = (const uint8_t*)uc->uc_mcontext.gregs[REG_RIP];
  if ((const char*)pc < __executable_start + 6 || (const char*)pc >= etext) return 0;
  return pc[-6] == 0x41 && pc[-5] == 0xba && (pc[0] == 0xe8 || pc[0] == 0xe9);
}

UNTRACED static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

UNTRACED static void on_catch(ucontext_t* uc) {
  volatile greg_t* saved = &uc->uc_mcontext.gregs[REG_RIP];
  const uint8_t* pc = (const uint8_t*)*saved;
  static const char msg[] = "caught\n";
  write(1, msg, sizeof msg - 1);
  const volatile uint8_t* mov = pc - 6;
  while (mov[0] == 0x41 && mov[1] == 0xba) nap_ms(1);  /* until callmon has detached */
  const uint8_t* now = (const uint8_t*)*saved;
  const char* where = now == pc + 5 ? "past the sled\n"
                      : now == pc - 6 && mov[0] == 0xc3 ? "to the ret\n"
                      : now == pc ? "left inside the sled\n" : "elsewhere\n";
  write(1, "returns ", 8);
  write(1, where, strlen(where));
  if (now == pc) _exit(1);
}

int main(int argc, char** argv) {
  const int free_run = argc > 1 && strcmp(argv[1], "free") == 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  install_trap_handler();
  printf("ready\n");
  long sum = 0;
  if (!free_run) {
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return 3;  /* the test's go, after the attach */
    const volatile uint8_t* sled = (const volatile uint8_t*)(void*)leaf;
    for (int i = 0; sled[0] != 0x41; ++i) {
      if (i == 60000) {
        printf("the sleds were never patched\n");
        return 2;
      }
      nap_ms(1);
    }
    start_stepping();
    sum += step(1);
    if (!caught) {
      printf("no trap landed inside a patched sled\n");
      return 2;
    }
  }
  sum = 0;
  for (long i = 0; i < 100000; ++i) sum += step(i);
  printf("sum %ld\n", sum);
  return 0;
}
