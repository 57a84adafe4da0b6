/* Monitor fixture: known call counts at -O2 without instrumentation. leaf 1000, mid 100,
   fib(15) 1973 calls, sleeper 2 (50 ms each, for --timing); exits with status 3. */
#include <time.h>

#define NOINLINE __attribute__((noinline))

NOINLINE int leaf(int x) {
  asm volatile("");
  return x * 3 + 1; /* LINE:leaf */
}

NOINLINE int mid(int x) {
  int s = 0;
  for (int i = 0; i < 10; i++) s += leaf(x + i);
  asm volatile("");
  return s;
}

NOINLINE int fib(int n) {
  if (n < 2) return n;
  int r = fib(n - 1) + fib(n - 2);
  asm volatile("" : "+r"(r)); /* no call in tail position: GCC would make one a loop */
  return r;
}

NOINLINE void sleeper(void) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, 0);
  asm volatile("");
}

NOINLINE int never_called(int x) {
  asm volatile("");
  return x + 7;
}

int main(int argc, char** argv) {
  int s = 0;
  for (int i = 0; i < 100; i++) s += mid(i);
  s += fib(15);
  sleeper();
  sleeper();
  if (argc > 5) s += never_called(argc);
  (void)argv;
  return s == 0 ? 1 : 3;
}
