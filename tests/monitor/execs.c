/* Monitor fixture: calls before_exec() twice, then replaces itself with the program named
   by argv[1] (the counts fixture), whose exit status (3) becomes the run's. */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int before_exec(int x) { asm volatile(""); return x + 1; }

int main(int argc, char** argv) {
  int s = before_exec(0) + before_exec(1);
  if (argc < 2) return 10 + s;
  execv(argv[1], argv + 1);
  perror("execv");
  return 9;
}
