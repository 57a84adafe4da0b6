/* A thread whose calls are all kept out of the trace from some point on (below --max-depth,
 * or each shorter than --min-duration), still running when the process ends
 * (tests/e2e/run_hidden_flush.py): the counts of its unrecorded calls must reach the
 * recording although the thread never writes another record. Prints what it did. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static sem_t done;
enum { kLoops = 100000 };

NOINLINE long leaf(long x) {
  sink += x;
  return x + 1;
}

NOINLINE long middle(long x) { return leaf(x) + 1; }

NOINLINE void* worker(void* arg) {
  (void)arg;
  for (long i = 0; i < kLoops; ++i) middle(i);
  sem_post(&done);
  for (;;) __asm__ volatile("pause");  /* no call, no record: the process's end stops it */
  return 0;
}

int main(void) {
  sem_init(&done, 0, 0);
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  sem_wait(&done);
  printf("worker made %d calls\n", 2 * kLoops);
  return 0;
}
