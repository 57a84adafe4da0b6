// The test-only knob TEST_CALLMON_HOOK_SIGNAL (test_signal.hpp).
#include "runtime/core/test_signal.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime/core/sys.hpp"

namespace callmon::rt {

namespace {
int g_signal = -1;  // -1: not read yet
}

int test_hook_signal() {
  int sig = __atomic_load_n(&g_signal, __ATOMIC_RELAXED);
  if (sig >= 0) return sig;
  const char* v = env_get("TEST_CALLMON_HOOK_SIGNAL");
  sig = 0;
  if (v)
    for (; *v >= '0' && *v <= '9' && sig < 1000; ++v) sig = sig * 10 + (*v - '0');
  if (sig >= 65) sig = 0;
  __atomic_store_n(&g_signal, sig, __ATOMIC_RELAXED);
  return sig;
}

void test_hook_signal_send(int sig) {
  ErrnoSaver es;
  syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
}

}  // namespace callmon::rt
