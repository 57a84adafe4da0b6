/* longjmp across frames: deep3() jumps back to run_jump() over deep2() and deep1(); in
 * run_recursive_jump() the jump leaves six frames of the recursive jumper(), and the calls
 * made after each jump (after_jump(), count_down()) belong to the function that called
 * setjmp. */
#include <setjmp.h>
#include <stdio.h>

#include "fixture.h"

static jmp_buf env;
static volatile int sink;

COUNTED void deep3(void) { longjmp(env, 1); }
COUNTED void deep2(void) { deep3(); }
COUNTED void deep1(void) { deep2(); }
COUNTED void after_jump(void) { sink = sink + 1; }

COUNTED void run_jump(void) {
  if (setjmp(env) == 0)
    deep1();
  else
    after_jump();
}

COUNTED void jumper(int depth) {
  if (depth < 0) return; /* never: tells GCC the recursion can end */
  if (depth == 0) longjmp(env, 2);
  jumper(depth - 1);
}

COUNTED void count_down(int n) {
  if (n > 0) count_down(n - 1);
}

COUNTED void run_recursive_jump(void) {
  if (setjmp(env) == 0)
    jumper(5);
  else
    count_down(3);
}

int main(void) {
  run_jump();
  run_recursive_jump();
  run_jump();
  printf("jumps done %d\n", sink);
  return 0;
}
