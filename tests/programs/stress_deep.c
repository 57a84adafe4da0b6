/* Stress: recursion one million deep, in a thread with a 1 GiB stack (the main thread's
 * limit cannot be raised once it runs). The runtime's shadow stack reserves 8 M frames. */
#include <pthread.h>
#include <stdio.h>

#include "fixture.h"

#define DEPTH 1000000L

COUNTED long recurse(long n) {
  if (n == 0) return 0;
  return recurse(n - 1) + 1;
}

static void* deep_thread(void* arg) {
  *(long*)arg = recurse(DEPTH);
  return NULL;
}

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1UL << 30);
  pthread_t thread;
  long depth = -1;
  if (pthread_create(&thread, &attr, deep_thread, &depth) != 0) {
    perror("pthread_create");
    return 1;
  }
  pthread_join(thread, NULL);
  printf("depth %ld\n", depth);
  return 0;
}
