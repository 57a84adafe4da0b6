// Threads of asynchronous cancelability type cancelled while they call instrumented
// functions in a loop: the cancellation lands anywhere, inside the probes' fast and slow
// paths and the runtime's own work included (docs/runtime.md, "Cancellation"). Each round
// starts two such threads, lets them run a little longer than the round before, cancels
// and joins them: every join must see PTHREAD_CANCELED. Then the main thread computes a sum
// through the same functions and prints it. Argument: the number of rounds (default 30).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) long leaf(long x) {
  sink += x;
  return x * 3 + 1;
}
__attribute__((noinline)) long mid(long x) { return leaf(x) + leaf(x + 1); }

static void* spin(void* arg) {
  (void)arg;
  int old;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
  for (long i = 0;; i++) sink += mid(i);
  return NULL;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 30;
  for (int round = 0; round < rounds; round++) {
    pthread_t t[2];
    for (int k = 0; k < 2; k++) pthread_create(&t[k], NULL, spin, NULL);
    usleep(2000 + round * 137);
    for (int k = 0; k < 2; k++) pthread_cancel(t[k]);
    for (int k = 0; k < 2; k++) {
      void* r;
      pthread_join(t[k], &r);
      if (r != PTHREAD_CANCELED) {
        printf("round %d: thread %d ended with %p, not PTHREAD_CANCELED\n", round, k, r);
        return 3;
      }
    }
  }
  long s = 0;
  for (int i = 0; i < 1000; i++) s += mid(i);
  printf("%d rounds cancelled, sum %ld\n", rounds, s);
  return 0;
}
