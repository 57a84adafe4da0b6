// C++ exceptions: thrower() throws across mid2() and mid1(); rethrower() catches, calls
// note() in its handler and rethrows; the exception passes outer2() and outer1() and is
// caught in top_catcher(), which then calls after(). Every frame the exception leaves
// must be closed with an [exception] mark. The last round throws nothing.
#include <cstdio>

#include "fixture.h"

struct Err {
  int code;  // an aggregate: no instrumented constructor
};

static volatile int sink;

COUNTED void thrower(int x) {
  if (x >= 0) throw Err{x};
}
COUNTED void mid2(int x) { thrower(x); }
COUNTED void mid1(int x) { mid2(x); }
COUNTED void note(int x) { sink = sink + x; }

COUNTED void rethrower(int x) {
  try {
    mid1(x);
  } catch (Err&) {
    note(x);
    throw;
  }
}

COUNTED void outer2(int x) { rethrower(x); }
COUNTED void outer1(int x) { outer2(x); }
COUNTED void after(int x) { sink = sink + x; }

COUNTED int top_catcher(int x) {
  int code = -1;
  try {
    outer1(x);
  } catch (Err& e) {
    code = e.code;
  }
  after(code);
  return code;
}

int main() {
  for (int i = 0; i < 3; i++) std::printf("caught %d\n", top_catcher(i));
  std::printf("no throw %d\n", top_catcher(-1));
  return 0;
}
