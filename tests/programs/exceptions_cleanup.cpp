// C++ exceptions through frames with cleanups (issue 21, class 2): level3(), level2() and
// level1() each hold a Guard whose destructor calls work(), so their landing pads run
// instrumented code and resume the unwinding; risky_frame() holds a Risky whose
// destructor throws and catches an exception of its own while the first one is being
// unwound; rethrow_all() catches with catch (...), calls work() and rethrows past its own
// Guard; safe() is noexcept and catches. across() sends an exception from thrower() through
// lib_pass() in a shared library, whose own cleanup calls the library's code; two_levels()
// nests a throw-and-catch in a destructor inside another. Under the -pg
// modes every landing pad of a frame whose return address was redirected must run in the
// right frame and the program must end as it does alone.
#include <cstdio>

#include "exceptions_cleanup_lib.h"
#include "fixture.h"

struct Err {
  int code;  // an aggregate: no instrumented constructor
};

static volatile int sink;

COUNTED void work(int x) { sink = sink + x; }

struct Guard {
  int id;
  COUNTED ~Guard() { work(id); }
};

COUNTED void thrower(int x) {
  if (x >= 0) throw Err{x};
}
COUNTED void level3(int x) {
  Guard g{3};
  thrower(x);
}
COUNTED void level2(int x) {
  Guard g{2};
  level3(x);
}
COUNTED void level1(int x) {
  Guard g{1};
  level2(x);
  work(100);
}

COUNTED void inner_throw(int x) { throw Err{x + 50}; }

struct Risky {
  int id;
  COUNTED ~Risky() {
    try {
      inner_throw(id);
    } catch (Err& e) {
      work(e.code);
    }
  }
};

COUNTED void risky_frame(int x) {
  Risky r{7};
  level1(x);
}

COUNTED void rethrow_all(int x) {
  Guard g{4};
  try {
    risky_frame(x);
  } catch (...) {
    work(40);
    throw;
  }
}

COUNTED int safe(int x) noexcept {
  try {
    rethrow_all(x);
  } catch (Err& e) {
    return e.code;
  }
  return -1;
}

// Two levels: t1's cleanup runs ~Outer, which throws from t2, whose cleanup runs ~Inner,
// which throws and catches; then ~Outer catches, and the first exception goes on.
COUNTED void t3() { throw Err{3}; }
struct Inner {
  int id;
  COUNTED ~Inner() {
    try {
      t3();
    } catch (Err& e) {
      work(e.code + id);
    }
  }
};
COUNTED void t2() {
  Inner i{0};
  throw Err{2};
}
struct Outer {
  int id;
  COUNTED ~Outer() {
    try {
      t2();
    } catch (Err& e) {
      work(e.code + id);
    }
  }
};
COUNTED void t1() {
  Outer o{0};
  throw Err{1};
}
COUNTED int two_levels() {
  try {
    t1();
  } catch (Err& e) {
    return e.code;
  }
  return -1;
}

COUNTED int across(int x) {
  try {
    lib_pass(x, thrower);
  } catch (Err& e) {
    return e.code;
  }
  return -1;
}

int main() {
  for (int i = 0; i < 2; i++) std::printf("safe %d\n", safe(i));
  std::printf("no throw %d\n", safe(-1));
  std::printf("across %d\n", across(8));
  std::printf("across no throw %d\n", across(-1));
  std::printf("two levels %d\n", two_levels());
  return 0;
}
