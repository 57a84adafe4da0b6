/* A program under an address-space limit (RLIMIT_AS, `ulimit -v`: tests/e2e/run_as_limit.py
 * runs it under 1 GB): eight threads, alive together, each make instrumented calls, then main
 * allocates 512 MB. Every reservation counts against the limit, MAP_NORESERVE or not: when
 * the runtime reserved 192 MiB of shadow stack per thread, the program's allocation failed
 * under callmon only. Prints whether it worked: the same with and without callmon; on
 * stderr, how many calls of work() it made. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

static pthread_barrier_t all_up, done;
static long calls;

COUNTED long work(long i) {
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  return i * 3 + 1;
}

static long works(int n) {
  long s = 0;
  for (long i = 0; i < n * 1000; i++) s += work(i);
  return s;
}

static void* worker(void* arg) {
  long r = works((int)(long)arg);
  pthread_barrier_wait(&all_up);
  pthread_barrier_wait(&done);  // alive while main allocates
  return (void*)r;
}

int main(void) {
  enum { kThreads = 8 };
  pthread_t t[kThreads];
  pthread_barrier_init(&all_up, NULL, kThreads + 1);
  pthread_barrier_init(&done, NULL, kThreads + 1);
  for (long i = 0; i < kThreads; i++) pthread_create(&t[i], NULL, worker, (void*)(10 + i));
  pthread_barrier_wait(&all_up);
  char* big = malloc(512u << 20);
  printf("threads %d, malloc(512 MB) %s\n", kThreads, big ? "ok" : "FAILED");
  free(big);
  pthread_barrier_wait(&done);
  long sum = 0;
  for (int i = 0; i < kThreads; i++) {
    void* r;
    pthread_join(t[i], &r);
    sum += (long)r;
  }
  printf("sum %ld\n", sum);
  fprintf(stderr, "work %ld\n", calls);  // its own count (run_fixture.program_counts)
  return 0;
}
