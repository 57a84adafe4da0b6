/* backtrace() from three instrumented levels deep, and a signal handler that takes one
 * too. In the -pg modes the return addresses on the stack are the exit trampoline's while
 * the functions run; backtrace() must still see the real callers, and the functions must
 * still return to them afterwards. Each frame's address is checked to lie in the function
 * expected there (the functions are small, so "within 512 bytes of its start" is enough). */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

/* Not instrumented in any mode (fixture.h). */
NOT_INSTRUMENTED static int in_function(void* addr, void (*fn)(void)) {
  char* a = (char*)addr;
  char* f = (char*)fn;
  return a > f && a < f + 512;
}

static volatile int sink;

int main(void);
COUNTED void level3(void);
COUNTED void level2(void);
COUNTED void level1(void);

/* Checks that the frames after backtrace's own are level3, level2, level1, main. */
COUNTED void level3(void) {
  void* frames[32];
  int n = backtrace(frames, 32);
  int ok = n >= 5 && in_function(frames[1], level2) && in_function(frames[2], level1) &&
           in_function(frames[3], (void (*)(void))main);
  /* the first frame is level3 itself (backtrace's return address) */
  ok = ok && in_function(frames[0], level3);
  printf("backtrace %s\n", ok ? "ok" : "WRONG");
  sink++;
}

COUNTED void level2(void) {
  level3();
  sink++;
}

COUNTED void level1(void) {
  level2();
  sink++;
}

COUNTED void in_handler(void) {
  void* frames[32];
  int n = backtrace(frames, 32);
  printf("handler backtrace %s\n", n >= 3 ? "ok" : "WRONG");
}

static void on_usr1(int sig) {
  (void)sig;
  in_handler();
}

int main(void) {
  level1();
  signal(SIGUSR1, on_usr1);
  raise(SIGUSR1);
  level1();
  return 0;
}
