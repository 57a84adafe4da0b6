/* A signal handler that interrupted a patched XRay sled, still running at the detach
 * (tests/attach/run_attach.py, case sigsled; docs/patching.md "Attaching", step 6). Built
 * with clang -fxray-instrument -fxray-instruction-threshold=1.
 *
 * The main thread calls tiny XRay-instrumented functions in a loop; once their sleds are
 * patched (callmon attached), a second thread sends it SIGUSR1 over and over (not before:
 * signals arriving while callmon holds the process under ptrace only slow the attach). The handler looks at the pc its signal frame saved: when
 * that pc lies between a patched sled's `mov $id, %r10d` (41 ba + 4 bytes) and its call or
 * jmp (e8/e9) -- which can only be while callmon is attached -- it prints "caught" and
 * waits (polling the sled's bytes) until the sled is compiled again, that is until callmon
 * has detached. It then reads its saved pc again: callmon must have moved it to where the
 * compiled sled goes (past an entry sled, to an exit sled's `ret`); left where it was, the
 * handler would return into the middle of the compiled sled's nops. It prints where it
 * returns to ("past the sled", "to the ret") or "left inside the sled" and exits 1 then.
 * The main thread then makes a fixed number of calls and prints their sum; exit status 0.
 * Without an attach ("free" as argv[1]) it sends no signal and prints only the sum.
 * argv[2] (optional): seconds to wait for a catch before giving up (exit 2). */
#define _GNU_SOURCE
#include <pthread.h>
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

extern char __executable_start[], etext[];

static volatile int caught, released;
static pthread_t main_thread;

NOINLINE long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

NOINLINE long step(long i) { return leaf(i) % 1000003; }

UNTRACED static int inside_patched_sled(const uint8_t* pc) {
  if ((const char*)pc < __executable_start + 6 || (const char*)pc >= etext) return 0;
  return pc[-6] == 0x41 && pc[-5] == 0xba && (pc[0] == 0xe8 || pc[0] == 0xe9);
}

UNTRACED static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

UNTRACED static void on_usr1(int sig, siginfo_t* si, void* ctx) {
  (void)sig, (void)si;
  if (caught) return;
  volatile greg_t* saved = &((ucontext_t*)ctx)->uc_mcontext.gregs[REG_RIP];
  const uint8_t* pc = (const uint8_t*)*saved;
  if (!inside_patched_sled(pc)) return;
  caught = 1;
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
  released = 1;
}

UNTRACED static void* sender(void* arg) {
  (void)arg;
  const volatile uint8_t* sled = (const volatile uint8_t*)(void*)leaf;
  while (sled[0] != 0x41 && !released) nap_ms(1);  /* until callmon has patched it */
  nap_ms(50);  /* and detached from the attach's stop */
  while (!caught && !released) {
    pthread_kill(main_thread, SIGUSR1);
    for (volatile int i = 0; i < 200; ++i) {
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  const int free_run = argc > 1 && strcmp(argv[1], "free") == 0;
  const double limit = argc > 2 ? atof(argv[2]) : 60;
  setvbuf(stdout, NULL, _IONBF, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_usr1;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  printf("ready\n");
  long sum = 0;
  if (!free_run) {
    main_thread = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long n = 0; !released; ++n) {
      sum += step(n & 1023);
      if ((n & 0xffff) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec > limit) {
          printf("no signal landed inside a patched sled in %g s\n", limit);
          released = 1;
          pthread_join(t, NULL);
          return 2;
        }
      }
    }
    pthread_join(t, NULL);
  }
  sum = 0;
  for (long i = 0; i < 100000; ++i) sum += step(i);
  printf("sum %ld\n", sum);
  return 0;
}
