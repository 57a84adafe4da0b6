/* The second library reload_main.c loads (libcmreload_b.so), at the address where
 * libcmreload_a.so was: b_entry calls b_leaf twice. */
#include "fixture.h"

COUNTED int b_leaf(int x) { return x - 1; }

int b_entry(int x) { return b_leaf(x) + b_leaf(x + 1) + 200; }
