/* Monitor fixture: the parent calls in_parent() 3 times, forks; the child calls in_child()
   5 times and exits 4; the parent exits with the child's status (so a child killed by a
   leftover breakpoint shows). */
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int in_parent(int x) { asm volatile(""); return x + 1; }
__attribute__((noinline)) int in_child(int x) { asm volatile(""); return x + 2; }

int main(void) {
  int s = 0;
  for (int i = 0; i < 3; i++) s += in_parent(i);
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 5; i++) s += in_child(i);
    _exit(s > 0 ? 4 : 5);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}
