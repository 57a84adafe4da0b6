/* fork made by the raw clone, clone3 and fork system calls (syscall(2)), as container runtimes
 * and sandboxes' zygotes do: glibc runs no pthread_atfork handler for them. Otherwise as
 * fork.c: each child calls work() 3 times through child_part(), the parent (after waiting)
 * 5 times through parent_part(), plus once in common() before the first fork. Each child
 * inherits the open frames main and do_fork, and returns through them. Before the runtime
 * saw these forks, a child went on writing into its parent's file through the parent's
 * thread state: one process recorded, calls lost. */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

COUNTED int work(int n) { return n * 2; }

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

/* 1 in the child, 0 in the parent once the child has ended. */
COUNTED int do_fork(int how) {
  fflush(stdout);
  pid_t pid;
  if (how == 2) {
    pid = (pid_t)syscall(SYS_fork);
  } else if (how == 1) {
    struct clone_args args = {0};
    args.exit_signal = SIGCHLD;
    pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
  } else {
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  }
  if (pid < 0) {
    perror("clone");
    return 0;
  }
  if (pid == 0) {
    printf("child %d\n", child_part());
    return 1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent %d child status %d\n", parent_part(), WEXITSTATUS(status));
  return 0;
}

int main(void) {
  common();
  if (do_fork(0)) return 0;
  if (do_fork(1)) return 0;
  if (do_fork(2)) return 0;
  return 0;
}
