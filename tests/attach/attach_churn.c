/* A fixture for `callmon record -p` with threads coming and going during the attach and the
 * detach (tests/attach/run_attach.py, case churn): a spawner thread creates and joins
 * short-lived threads in a loop, each calling work() a fixed number of times, until stdin
 * says "Q". The program checks every thread's result and prints whether all were right. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CALLS 50
#define NOINLINE __attribute__((noinline))

static volatile int stop;

NOINLINE long work(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 2 + 1;
}

NOINLINE void* short_lived(void* arg) {
  long sum = 0;
  for (long i = 0; i < CALLS; ++i) sum += work(i);
  *(long*)arg = sum;
  return NULL;
}

NOINLINE void* spawner(void* arg) {
  long* wrong = arg;
  while (!stop) {
    pthread_t t[4];
    long results[4];
    for (int i = 0; i < 4; ++i) pthread_create(&t[i], NULL, short_lived, &results[i]);
    for (int i = 0; i < 4; ++i) {
      pthread_join(t[i], NULL);
      if (results[i] != (long)CALLS * CALLS) ++*wrong;  /* sum of 2i+1 for i < CALLS */
    }
  }
  return NULL;
}

int main(void) {
  long wrong = 0;
  pthread_t s;
  setvbuf(stdout, NULL, _IOLBF, 0);
  pthread_create(&s, NULL, spawner, &wrong);
  printf("ready\n");
  char line[16];
  while (fgets(line, sizeof line, stdin) && line[0] != 'Q') printf("ok\n");
  stop = 1;
  pthread_join(s, NULL);
  printf("%s\n", wrong ? "WRONG RESULTS" : "all results right");
  return 5;
}
