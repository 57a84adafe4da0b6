/* A program that lowers its own file size limit (RLIMIT_FSIZE) below what the recording
 * writes (tests/e2e/run_fsize_limit.py): past the limit the kernel refuses writes and raises
 * SIGXFSZ, whose default action kills the program. Then it starts a thread, forks a child
 * and makes enough calls to need more of its event file. Prints what it did: the same with
 * and without callmon, which must not make it die of SIGXFSZ. */
#include <stdio.h>
#include <sys/resource.h>

#include "thread_child_steps.h"

int main(void) {
  step(1);
  struct rlimit limit = {512, 512};
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
  int child = thread_child_steps(1000, 1000, 200000);
  printf("child status %d, sum %ld\n", child, sink);
  return 3;
}
