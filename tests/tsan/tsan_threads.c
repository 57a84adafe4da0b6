/* ThreadSanitizer fixture: compiled with -fsanitize=thread -finstrument-functions and
 * recorded by `callmon record`. Stresses the runtime's multi-threaded paths: 3 rounds of 8
 * threads that start and end together (per-thread set-up, END and file trim at thread
 * exit), a thread that dlopens a library while the others call (module rescan on that
 * thread's next hook), and a mutex-protected counter (a data race in the program itself
 * would be reported too, and fail the test). Prints the number of leaf() calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3
#define NTHREADS 8
#define NCALLS 2000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

__attribute__((noinline)) long leaf(long i) { return i * 3 + 1; }

__attribute__((noinline)) void add(long v) {
  pthread_mutex_lock(&lock);
  counter += v;
  pthread_mutex_unlock(&lock);
}

static void* worker(void* arg) {
  long id = (long)arg;
  if (id == 0) {
    /* A new module while the other threads are recording. */
    void* h = dlopen("libm.so.6", RTLD_NOW);
    if (h != NULL) dlclose(h);
  }
  long sum = 0;
  for (long i = 0; i < NCALLS; i++) sum += leaf(i);
  add(sum);
  return NULL;
}

__attribute__((noinline)) void round_of_threads(void) {
  pthread_t t[NTHREADS];
  for (long i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, worker, (void*)i);
  for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
}

int main(void) {
  for (int r = 0; r < ROUNDS; r++) round_of_threads();
  printf("leaf calls %d counter %ld\n", ROUNDS * NTHREADS * NCALLS, counter);
  return 0;
}
