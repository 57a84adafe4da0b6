// Stress: a C++ exception thrown through 1 000 frames of dive(), 50 times; each throw is
// caught in catcher(), so every dive() frame it leaves must end as an exception exit.
#include <cstdio>

#include "fixture.h"

static volatile long sink;

struct Deep {
  long depth;  // an aggregate: no instrumented constructor
};

COUNTED void dive(long n) {
  if (n == 0) throw Deep{1000};
  sink = sink + 1;
  dive(n - 1);
  sink = sink - 1;  // after the call: keeps it from being a tail call
}

COUNTED long catcher(void) {
  try {
    dive(999);
  } catch (const Deep& d) {
    return d.depth;
  }
  return 0;
}

int main() {
  long caught = 0;
  for (int i = 0; i < 50; ++i) caught += catcher() == 1000;
  std::printf("caught %ld\n", caught);
  return 0;
}
