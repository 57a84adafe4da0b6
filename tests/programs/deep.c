/* Deep recursion: recurse(DEPTH) with DEPTH from argv[1] (default 100 000). The main
 * thread's stack limit cannot be raised once it runs, so the recursion runs in a thread
 * whose stack is sized for the depth (256 bytes a frame, at least 256 MB). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

/* Stored after the recursive call, so that no compiler turns the recursion into a loop
 * (GCC does at -O2 when no -finstrument-functions exit hook follows the call, as with -pg). */
static volatile long last;

COUNTED long recurse(long n) {
  if (n == 0) return 0;
  long r = recurse(n - 1);
  last = r;
  return r + 1;
}

static void* deep_thread(void* arg) {
  long* depth = (long*)arg;
  *depth = recurse(*depth);
  return NULL;
}

int main(int argc, char** argv) {
  long depth = argc > 1 ? atol(argv[1]) : 100000L;
  size_t stack = (size_t)depth * 256;
  if (stack < (256UL << 20)) stack = 256UL << 20;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack);
  pthread_t thread;
  if (pthread_create(&thread, &attr, deep_thread, &depth) != 0) {
    perror("pthread_create");
    return 1;
  }
  pthread_join(thread, NULL);
  printf("depth %ld\n", depth);
  return 0;
}
