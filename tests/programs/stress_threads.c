/* Stress: thread lifetimes. 50 rounds; each starts 64 threads that call worker() (10 leaf()
 * calls each) and joins them: 3 200 threads, each with its own trace file, set up and
 * finished while others run. */
#include <pthread.h>
#include <stdio.h>

#include "fixture.h"

#define ROUNDS 50
#define THREADS 64
#define LEAVES 10

static volatile long sink;

COUNTED void leaf(long i) { __atomic_add_fetch(&sink, i, __ATOMIC_RELAXED); }

COUNTED void worker(void) {
  for (long i = 0; i < LEAVES; ++i) leaf(1);
}

static void* thread_main(void* arg) {
  (void)arg;
  worker();
  return NULL;
}

COUNTED int round_of_threads(void) {
  pthread_t t[THREADS];
  int started = 0;
  for (int i = 0; i < THREADS; ++i)
    if (pthread_create(&t[i], NULL, thread_main, NULL) == 0) ++started;
  for (int i = 0; i < started; ++i) pthread_join(t[i], NULL);
  return started;
}

int main(void) {
  long threads = 0;
  for (int r = 0; r < ROUNDS; ++r) threads += round_of_threads();
  printf("threads %ld leaves %ld\n", threads, (long)sink);
  return 0;
}
