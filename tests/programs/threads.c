/* Eight threads, each calling worker() NCALLS times; main() only starts and joins them.
 * Each thread names itself worker<N>, which the recording keeps. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "fixture.h"

#define NTHREADS 8
#define NCALLS 1000

static pthread_t threads[NTHREADS];
static long results[NTHREADS];

COUNTED long worker(long i) { return i * 3 + 1; }

static void* thread_main(void* arg) {
  long id = (long)arg;
  char name[16];
  snprintf(name, sizeof name, "worker%ld", id);
  pthread_setname_np(pthread_self(), name);
  long sum = 0;
  for (long i = 0; i < NCALLS; i++) sum += worker(i);
  results[id] = sum;
  return NULL;
}

COUNTED void spawn_all(void) {
  for (long t = 0; t < NTHREADS; t++) pthread_create(&threads[t], NULL, thread_main, (void*)t);
}

COUNTED void join_all(void) {
  for (int t = 0; t < NTHREADS; t++) pthread_join(threads[t], NULL);
}

int main(void) {
  spawn_all();
  join_all();
  long total = 0;
  for (int t = 0; t < NTHREADS; t++) total += results[t];
  printf("threads %d calls %d total %ld\n", NTHREADS, NCALLS, total);
  return 0;
}
