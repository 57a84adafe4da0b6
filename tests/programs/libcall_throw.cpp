// Library calls left by an exception (docs/patching.md, "Library calls"): a C++ exception
// thrown by qsort's comparator propagates through qsort (glibc's code) into the caller,
// which catches it; the qsort call must be closed as left by the exception, and the
// program must go on as without callmon. Used by tests/e2e/run_libcall.py.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static int compares = 0;

static int cmp_throw(const void* a, const void* b) {
  if (++compares == 5) throw std::runtime_error("comparator gave up");
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

static int sort_and_catch(int n) {
  int v[64];
  for (int i = 0; i < n; ++i) v[i] = n - i;
  try {
    qsort(v, n, sizeof v[0], cmp_throw);
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
    return 1;
  }
  return 0;
}

int main(int argc, char**) {
  int caught = 0;
  for (int round = 0; round < 3; ++round) {
    compares = 0;
    caught += sort_and_catch(argc + 31);
  }
  std::printf("caught %d\n", caught);
  return 0;
}
