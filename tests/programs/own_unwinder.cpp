// A C++ program for tests/e2e/run_own_unwinder.py, linked by the test with and without
// -static-libgcc -static-libstdc++ (its own copy of the unwinder): an exception thrown by a
// qsort comparator crosses the library call, and, with an argument, exceptions thrown two
// calls deep cross recorded functions; with `wait FILE` it does so until FILE exists
// (attached to meanwhile).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// One round: the qsort whose comparator throws, and six calls of which, with `throws`,
// three throw two calls deep. Returns "compared N sum S caught C".
void round(bool throws, char* out, size_t size) {
  int v[16];
  for (int i = 0; i < 16; ++i) v[i] = (i * 7) % 16;
  int caught = 0, sum = 0;
  compared = 0;
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
  std::snprintf(out, size, "compared %d sum %d caught %d", compared, sum, caught);
}

// own_unwinder [throw] [wait FILE]: one round, or (wait) rounds every 2 ms until FILE
// exists, for an attach to find it throwing.
int main(int argc, char** argv) {
  bool throws = false;
  const char* wait = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "throw")) throws = true;
    if (!std::strcmp(argv[i], "wait") && i + 1 < argc) wait = argv[++i];
  }
  char line[80];
  round(throws, line, sizeof line);
  while (wait && access(wait, F_OK) != 0) {
    usleep(2000);
    round(throws, line, sizeof line);
  }
  std::printf("%s\n", line);
  return 0;
}
