/* Stress: a fork storm. Two threads call spin() until the storm is over while the main
 * thread forks 50 children one after another without waiting; every 5th child forks a
 * grandchild of its own. A child calls child_work() (100 work() calls), a grandchild grandchild_work()
 * (50 work() calls); both return through main(). Then everybody is reaped. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define CHILDREN 50

static volatile long sink;
static volatile int storm_over;
static long spins[2];

COUNTED void work(long i) { sink = sink + i; }
COUNTED void spin(long i) { sink = sink ^ i; }

COUNTED void child_work(void) {
  for (long i = 0; i < 100; ++i) work(i);
}
COUNTED void grandchild_work(void) {
  for (long i = 0; i < 50; ++i) work(i);
}

COUNTED void* spinner(void* arg) {
  long* n = arg;
  while (!storm_over) spin(++*n);
  return NULL;
}

/* Returns 1 in a child or grandchild (which then leaves main), 0 in the parent. */
COUNTED int storm(pid_t* kids) {
  for (int i = 0; i < CHILDREN; ++i) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      child_work();
      if (i % 5 == 0) {
        pid_t g = fork();
        if (g == 0) {
          grandchild_work();
          return 1;
        }
        int st = 0;
        waitpid(g, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 2;
      }
      return 1;
    }
    kids[i] = pid;
  }
  return 0;
}

int main(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, spinner, &spins[i]);
  pid_t kids[CHILDREN];
  int role = storm(kids);
  if (role != 0) return role == 1 ? 0 : 1;
  int ok = 0;
  for (int i = 0; i < CHILDREN; ++i) {
    int st = 0;
    if (waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0) ++ok;
  }
  storm_over = 1;
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  printf("children ok %d spins %ld\n", ok, spins[0] + spins[1]);
  return 0;
}
