/* fork with both processes calling functions: the child calls work() 3 times through
 * child_part(), the parent (after waiting for the child) 5 times through parent_part(), plus
 * once in common() before the fork. The child inherits the open frames main and do_fork. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

COUNTED int work(int n) { return n * 2; }

/* The result is stored: a call without effects could be dropped (clang does at -O2 when
 * no -finstrument-functions hook gives the functions a side effect, as with -pg). */
static volatile int kept;

COUNTED void common(void) { kept = work(100); }

COUNTED int child_part(void) {
  int sum = 0;
  for (int i = 0; i < 3; i++) sum += work(i);
  return sum;
}

COUNTED int parent_part(void) {
  int sum = 0;
  for (int i = 0; i < 5; i++) sum += work(i);
  return sum;
}

COUNTED void do_fork(void) {
  fflush(stdout); /* or the child would print the parent's buffered output again */
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return;
  }
  if (pid == 0) {
    printf("child %d\n", child_part());
    return; /* the child returns through do_fork() and main() like the parent */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent %d child status %d\n", parent_part(), WEXITSTATUS(status));
}

int main(void) {
  common();
  do_fork();
  return 0;
}
