/* A program that lowers its own file size limit (RLIMIT_FSIZE) below what the recording
 * writes (tests/e2e/run_fsize_limit.py): past the limit the kernel refuses writes and raises
 * SIGXFSZ, whose default action kills the program. Then it starts a thread, forks a child
 * and makes enough calls to need more of its event file. Prints what it did: the same with
 * and without callmon, which must not make it die of SIGXFSZ. */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
NOINLINE void step(long i) { sink += i; }
NOINLINE void* worker(void* arg) {
  for (long i = 0; i < 1000; ++i) step(i);
  return arg;
}

int main(void) {
  step(1);
  struct rlimit limit = {512, 512};
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  pid_t child = fork();
  if (child == 0) {
    for (long i = 0; i < 1000; ++i) step(i);
    _exit(5);
  }
  int status = 0;
  waitpid(child, &status, 0);
  for (long i = 0; i < 200000; ++i) step(i);
  printf("child status %d, sum %ld\n", WEXITSTATUS(status), sink);
  return 3;
}
