/* Signal handlers on a small alternate stack: sysconf(_SC_MINSIGSTKSZ) (what the kernel's
 * signal frame takes on this CPU) plus 1 KiB, a guard page below (tests/e2e/
 * run_small_altstack.py). A thread makes an instrumented call, installs the stack, and
 * raises SIGUSR1 a hundred times; the handler makes instrumented calls. The hooks' slow
 * paths used to take a 1 KiB record buffer on that stack: SIGSEGV under callmon only.
 * Prints the handler's result: the same with and without callmon. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixture.h"

static volatile long result;

COUNTED long leaf(long x) { return x * 3 + 1; }

COUNTED long inner(long x) { return leaf(x) + leaf(x + 1); }

static void on_usr1(int sig) { result += inner(sig); }

static void* worker(void* arg) {
  size_t size = (size_t)arg;
  result += leaf(0);
  char* m = mmap(NULL, size + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0) return NULL;
  stack_t ss = {.ss_sp = m + 4096, .ss_size = size, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) return NULL;
  for (int i = 0; i < 100; i++) pthread_kill(pthread_self(), SIGUSR1);
  return NULL;
}

int main(void) {
  long min = sysconf(_SC_MINSIGSTKSZ);
  size_t size = (size_t)(min > 2048 ? min : 2048) + 1024;
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t t;
  pthread_create(&t, NULL, worker, (void*)size);
  pthread_join(t, NULL);
  printf("result %ld\n", result);
  return 0;
}
