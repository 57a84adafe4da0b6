/* Fault: a program callmon cannot record (its -o directory cannot be written). It prints
 * one line and exits with status 3, so a test sees whether it ran and which status came
 * back. */
#include <stdio.h>

#include "fixture.h"

COUNTED void hello(void) { printf("hello from the program\n"); }

int main(void) {
  hello();
  return 3;
}
