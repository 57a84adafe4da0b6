/* The first library reload_main.c loads (libcmreload_a.so): a_entry -> a_mid -> a_leaf.
 * Laid out like reload_lib_b.c so that the loader maps both at one address. */
#include "fixture.h"

COUNTED int a_leaf(int x) { return x * 2; }

COUNTED int a_mid(int x) { return a_leaf(x) + 1; }

int a_entry(int x) { return a_mid(x) + 100; }
