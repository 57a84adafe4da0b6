/* The coverage fixture's instrumented shared library. */
__attribute__((noinline)) int lib_called(int x) { return x ^ 0x55; }
__attribute__((noinline)) int lib_never(int x) { return x | 1; }
