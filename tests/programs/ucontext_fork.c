// fork while other threads switch ucontext coroutines: two threads each run a ring of two
// coroutines that swap contexts as fast as they can, and the main thread forks 100 times.
// Each child switches to a coroutine of its own and back, then exits 0. Under callmon a
// child forked while another thread held the runtime's table of suspended contexts used to
// wait for that lock forever (the thread holding it does not exist in the child); each
// child now arms a 10 s alarm, so a hang shows as a child killed by SIGALRM.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int stop;

__attribute__((noinline)) long leaf(long x) { return x * 2 + 1; }

struct Ring {
  ucontext_t home, co;
  char stack[65536];
  long n;
};

static struct Ring* ring_of(void* p) { return (struct Ring*)p; }

__attribute__((noinline)) static void co_body(unsigned lo, unsigned hi) {
  struct Ring* r = ring_of((void*)(((unsigned long)hi << 32) | lo));
  for (;;) {
    r->n += leaf(r->n & 7);
    swapcontext(&r->co, &r->home);
  }
}

static void start_ring(struct Ring* r) {
  getcontext(&r->co);
  r->co.uc_stack.ss_sp = r->stack;
  r->co.uc_stack.ss_size = sizeof r->stack;
  r->co.uc_link = NULL;
  unsigned long p = (unsigned long)r;
  makecontext(&r->co, (void (*)(void))co_body, 2, (unsigned)p, (unsigned)(p >> 32));
}

static void* spinner(void* arg) {
  struct Ring* r = arg;
  start_ring(r);
  while (!stop) swapcontext(&r->home, &r->co);
  return NULL;
}

int main(void) {
  static struct Ring rings[2], child_ring;
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, spinner, &rings[i]);
  int bad = 0;
  for (int k = 0; k < 100; k++) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(10);
      start_ring(&child_ring);
      swapcontext(&child_ring.home, &child_ring.co);
      _exit(child_ring.n == 1 ? 0 : 2);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad++;
  }
  stop = 1;
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("forks 100, children failed %d\n", bad);
  return bad != 0;
}
