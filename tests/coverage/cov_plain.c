/* Built without instrumentation: coverage must not count it as a function never called. */
__attribute__((noinline)) int plain_helper(int x) { return x + 2; }
