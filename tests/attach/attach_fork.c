/* A fixture for `callmon record -p` and fork (tests/attach/run_attach.py, case fork): for
 * each line read from stdin, a child calls work(10) and leaves with _exit, the parent waits
 * for it and calls work(5). While attached, the child records into its own files. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x + 1;
}

__attribute__((noinline)) long work(long n) {
  long s = 0;
  for (long i = 0; i < n; ++i) s += leaf(i);
  return s;
}

int main(void) {
  char line[16];
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  while (fgets(line, sizeof line, stdin) && line[0] != 'Q') {
    pid_t p = fork();
    if (p == 0) _exit((int)(work(10) & 0x7f));
    int st = 0;
    waitpid(p, &st, 0);
    printf("child %d parent %ld\n", WEXITSTATUS(st), work(5));
  }
  return 6;
}
