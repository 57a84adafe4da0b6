/* A thread whose calls are all kept out of the trace from some point on (below --max-depth,
 * or each shorter than --min-duration), still running when the process ends
 * (tests/e2e/run_hidden_flush.py): the counts of its unrecorded calls must reach the
 * recording although the thread never writes another record. Prints what it did.
 * With "_exit" or "_Exit" as argv[1], the main thread makes the calls itself and ends the
 * process with that function: its counts must reach the recording too. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(int argc, char** argv) {
  if (argc > 1) {
    for (long i = 0; i < kLoops; ++i) middle(i);
    printf("main made %d calls\n", 2 * kLoops);
    fflush(stdout);
    if (strcmp(argv[1], "_Exit") == 0) _Exit(0);
    _exit(0);
  }
  sem_init(&done, 0, 0);
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  sem_wait(&done);
  printf("worker made %d calls\n", 2 * kLoops);
  return 0;
}
