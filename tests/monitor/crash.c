/* Monitor fixture: calls step() 7 times, then dies of SIGSEGV (or, given an argument,
   raises SIGUSR1 with a handler 3 times and then kills itself with SIGTERM). */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int step(int x) {
  asm volatile("");
  return x + 1;
}

__attribute__((noinline)) void on_usr1(int sig) {
  asm volatile("");
  (void)sig;
}

int main(int argc, char** argv) {
  volatile int s = 0;
  for (int i = 0; i < 7; i++) s += step(i);
  if (argc > 1) {
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < 3; i++) raise(SIGUSR1);
    kill(getpid(), SIGTERM);
    pause();
  }
  volatile int* p = (int*)(long)atoi("0");
  *p = s;
  return 0;
}
