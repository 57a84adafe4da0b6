// The shared library of the exceptions_cleanup fixture: lib_pass() holds a LibGuard whose
// destructor calls lib_work(), so the exception thrown by the callback runs the library's
// landing pad and resumes the unwinding back into the program.
#include "exceptions_cleanup_lib.h"

#include "fixture.h"

static volatile int lib_sink;

COUNTED void lib_work(int x) { lib_sink = lib_sink + x; }

struct LibGuard {
  int id;
  COUNTED ~LibGuard() { lib_work(id); }
};

COUNTED void lib_pass(int x, void (*cb)(int)) {
  LibGuard g{9};
  cb(x);
}
