/* Live coverage fixture: a fork whose child calls functions the parent does not. Each
 * process's calls are counted once (the child's copy of the counters starts from zero) and
 * the parent goes on after the fork (monitor mode once crashed writing a FORK record). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Stores to `sink`: functions without side effects may be folded away at -O2 -pg. */
static volatile int sink;
__attribute__((noinline)) int leaf(int x) { sink = x; return x + 1; }
__attribute__((noinline)) int child_only(int x) { sink = x; return x * 2; }
__attribute__((noinline)) int never(int x) { sink = x; return x - 3; }

int main(int argc, char** argv) {
  (void)argv;
  int s = 0;
  for (int i = 0; i < 3; ++i) s += leaf(i);
  pid_t pid = fork();
  if (pid == 0) return (child_only(s) + leaf(1)) & 1;
  waitpid(pid, NULL, 0);
  s += leaf(9);
  if (argc > 5) s += never(s);
  printf("%d\n", s);
  return 0;
}
