/* Monitor fixture for attach/detach: prints "tick N" with N counting up by one every 2 ms,
   forever, through tick(); a worker thread spins on spin(). Output is flushed per line. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) long tick(long n) {
  asm volatile("");
  printf("tick %ld\n", n);
  fflush(stdout);
  return n + 1;
}

__attribute__((noinline)) long spin(long x) {
  asm volatile("");
  return x * 7 + 1;
}

static void* worker(void* arg) {
  volatile long s = (long)arg;
  for (;;) {
    s = spin(s);
    struct timespec ts = {0, 100 * 1000};
    nanosleep(&ts, 0);
  }
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  long n = 0;
  for (;;) {
    n = tick(n);
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, 0);
  }
}
