/* Mutual recursion: is_even(10) and is_odd(7) call each other down to 0. */
#include <stdio.h>

#include "fixture.h"

COUNTED int is_odd(int n);

COUNTED int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }

COUNTED int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }

int main(void) {
  /* Separate statements: argument evaluation order is unspecified. */
  int even = is_even(10);
  int odd = is_odd(7);
  printf("is_even(10) = %d\nis_odd(7) = %d\n", even, odd);
  return 0;
}
