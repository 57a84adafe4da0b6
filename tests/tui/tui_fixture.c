/* The fixture recorded by the tui's end-to-end test (run_tui.py): a call tree three levels
 * deep with distinct names and distinct call counts, so that folding, sorting and search
 * each change the screen in a way the test can see, and a second thread for the picker.
 *   main -> load_config -> parse_line (x40) -> tokenize (x40)
 *        -> compute -> square (x300), cube (x7)
 *        -> spawn_worker (thread: worker_loop -> worker_step x25) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "fixture.h"

volatile long sink;

COUNTED long tokenize(long i) { return i ^ 5; }
COUNTED long parse_line(long i) { return tokenize(i) + 1; }
COUNTED void load_config(void) {
  for (long i = 0; i < 40; i++) sink += parse_line(i);
}

COUNTED long square(long x) { return x * x; }
COUNTED long cube(long x) { return x * x * x; }
COUNTED void compute(void) {
  for (long i = 0; i < 300; i++) sink += square(i);
  for (long i = 0; i < 7; i++) sink += cube(i);
}

COUNTED long worker_step(long i) { return i + 3; }
static void* worker_loop(void* arg) {
  (void)arg;
  for (long i = 0; i < 25; i++) sink += worker_step(i);
  return NULL;
}
COUNTED void spawn_worker(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker_loop, NULL);
  pthread_join(t, NULL);
}

int main(void) {
  load_config();
  compute();
  spawn_worker();
  printf("sink %ld\n", (long)sink);
  return 0;
}
