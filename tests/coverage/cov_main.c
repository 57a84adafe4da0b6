/* Coverage fixture: which functions run depends on the arguments, so two recordings with
 * different arguments cover different functions and --merge adds them up. lib_called() and
 * lib_never() live in a shared library; plain_helper() in a file built without
 * instrumentation, so coverage must not list it. */
#include <stdio.h>
#include <string.h>

int lib_called(int x);
int lib_never(int x);
int plain_helper(int x);

__attribute__((noinline)) int always(int x) { return x + 1; }
__attribute__((noinline)) int with_a(int x) { return x * 3; }
__attribute__((noinline)) int with_b(int x) { return x - 7; }
__attribute__((noinline)) int never_called(int x) { return x / 5; }

int main(int argc, char** argv) {
  int s = 0;
  for (int i = 0; i < 4; ++i) s += always(i);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "a") == 0) s += with_a(s);
    if (strcmp(argv[i], "b") == 0) s += with_b(s) + lib_called(s);
    if (strcmp(argv[i], "never") == 0) s += never_called(s) + lib_never(s);
  }
  s += plain_helper(s);
  printf("%d\n", s);
  return 0;
}
