// A C++ program for tests/e2e/run_own_unwinder.py, linked by the test with and without
// -static-libgcc -static-libstdc++ (its own copy of the unwinder): an exception thrown by a
// qsort comparator crosses the library call, and, with an argument, exceptions thrown two
// calls deep cross recorded functions.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static int compared = 0;

__attribute__((noinline)) int compare(const void* a, const void* b) {
  if (++compared == 5) throw std::runtime_error("compare");
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

__attribute__((noinline)) int inner(int x, bool throws) {
  if (throws && x > 2) throw std::runtime_error("inner");
  return x;
}

__attribute__((noinline)) int middle(int x, bool throws) { return inner(x, throws) + 1; }

int main(int argc, char**) {
  const bool throws = argc > 1;
  int v[16];
  for (int i = 0; i < 16; ++i) v[i] = (i * 7) % 16;
  int caught = 0, sum = 0;
  if (throws) {
    try {
      qsort(v, 16, sizeof v[0], compare);
    } catch (const std::exception&) {
      ++caught;
    }
  }
  for (int i = 0; i < 6; ++i) {
    try {
      sum += middle(i, throws);
    } catch (const std::exception&) {
      ++caught;
    }
  }
  std::printf("compared %d sum %d caught %d\n", compared, sum, caught);
  return 0;
}
