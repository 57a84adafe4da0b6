// Fixture of tests/tools/run_inject.py: error paths that run only under `callmon inject`.
// Each function can fail in the way its callers handle (so no compiler may prove it cannot
// throw), and main prints what every call gave: its result, the exception it caught (type,
// errno, message) or the errno it saw. Without injection every call succeeds.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <new>
#include <stdexcept>
#include <system_error>

#include "fixture.h"

static volatile int never;  // 0: the throws below never happen on their own

COUNTED int open_db(int i) {
  if (never) throw std::runtime_error("never");
  return i;
}

COUNTED int lookup(int k) {
  if (never) throw std::runtime_error("never");
  return k * 2;
}

COUNTED long answer(void) {
  if (never) throw std::runtime_error("never");
  return 42;
}

COUNTED void step(int i) {
  if (never) throw std::runtime_error("never");
  (void)i;
}

static void report(const char* what, int i) {
  try {
    throw;
  } catch (const std::system_error& e) {
    printf("%s %d: system_error %s: %s\n", what, i, strerrorname_np(e.code().value()), e.what());
  } catch (const std::bad_alloc&) {
    printf("%s %d: bad_alloc\n", what, i);
  } catch (const std::logic_error& e) {
    printf("%s %d: logic_error %s\n", what, i, e.what());
  } catch (const std::runtime_error& e) {
    printf("%s %d: runtime_error %s\n", what, i, e.what());
  }
}

int main() {
  for (int i = 1; i <= 5; i++) {
    try {
      printf("open_db %d -> %d\n", i, open_db(i));
    } catch (...) {
      report("open_db", i);
    }
  }
  for (int i = 1; i <= 3; i++) {
    errno = 0;
    int r = lookup(i);
    int e = errno;
    printf("lookup %d -> %d errno %s\n", i, r, e ? strerrorname_np(e) : "0");
  }
  printf("answer -> %ld\n", answer());
  for (int i = 1; i <= 20; i++) {
    try {
      step(i);
    } catch (...) {
      report("step", i);
    }
  }
  return 0;
}
