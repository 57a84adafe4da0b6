// The test-only knobs TEST_CALLMON_HOOK_SIGNAL and TEST_CALLMON_RECORD_SIGNAL
// (test_signal.hpp).
#include "runtime/core/test_signal.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime/core/sys.hpp"

namespace callmon::rt {

int g_test_record_signal = 0;

namespace {

int g_signal = -1;  // -1: not read yet

// A signal number from the environment variable `name`, 0 when unset or not one.
int knob_signal(const char* name) {
  const char* v = env_get(name);
  int sig = 0;
  if (v)
    for (; *v >= '0' && *v <= '9' && sig < 1000; ++v) sig = sig * 10 + (*v - '0');
  return sig < 65 ? sig : 0;
}

__attribute__((constructor)) void read_record_knob() {
  g_test_record_signal = knob_signal("TEST_CALLMON_RECORD_SIGNAL");
}

}  // namespace

void test_record_signal_send() {
  long pid, tid, ret;
  asm volatile("syscall" : "=a"(pid) : "0"(long{SYS_getpid}) : "rcx", "r11", "memory");
  asm volatile("syscall" : "=a"(tid) : "0"(long{SYS_gettid}) : "rcx", "r11", "memory");
  asm volatile("syscall"
               : "=a"(ret)
               : "0"(long{SYS_tgkill}), "D"(pid), "S"(tid), "d"(long{g_test_record_signal})
               : "rcx", "r11", "memory");
  (void)ret;
}

int test_hook_signal() {
  int sig = __atomic_load_n(&g_signal, __ATOMIC_RELAXED);
  if (sig >= 0) return sig;
  sig = knob_signal("TEST_CALLMON_HOOK_SIGNAL");
  __atomic_store_n(&g_signal, sig, __ATOMIC_RELAXED);
  return sig;
}

void test_hook_signal_send(int sig) {
  ErrnoSaver es;
  syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
}

}  // namespace callmon::rt
