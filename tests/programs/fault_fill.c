/* Fault: a program that writes more trace than its recording directory can take. It calls
 * work() ARGV[1] times on the main thread and in one thread (about 5 bytes of trace per
 * call), then prints what it computed. With ARGV[2] = KIB it first lowers RLIMIT_FSIZE to
 * KIB KiB (its own files are small; the runtime's trace files are not). Under a full disk
 * or the file size limit, the recording must stop and the program run on unchanged. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "fixture.h"

static volatile long sink;
static long calls;

COUNTED void work(long i) { sink = sink + (i & 7); }

COUNTED long loop(void) {
  long sum = 0;
  for (long i = 0; i < calls; ++i) {
    work(i);
    sum += i & 7;
  }
  return sum;
}

static void* thread_main(void* arg) {
  *(long*)arg = loop();
  return NULL;
}

int main(int argc, char** argv) {
  calls = argc > 1 ? atol(argv[1]) : 1000000;
  if (argc > 2) {
    struct rlimit lim = {(rlim_t)atol(argv[2]) << 10, RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) {
      perror("setrlimit");
      return 2;
    }
  }
  long in_thread = 0;
  pthread_t t;
  pthread_create(&t, NULL, thread_main, &in_thread);
  long here = loop();
  pthread_join(t, NULL);
  printf("sums %ld %ld\n", here, in_thread);
  return 0;
}
