// system()'s wait (system_wait.hpp). The cancellation unwinds the thread's stack, and only a
// handler that unwinding runs can clean up. Built without exceptions, as the whole runtime
// is, pthread_cleanup_push takes glibc's setjmp form (__pthread_register_cancel), whose
// buffer the cancellation's unwinding jumps to: no landing pad, no personality routine, so
// libcallmon.so needs no libstdc++ (with -fexceptions it did, and libstdc++'s start-up
// allocation showed in every recorded program's own malloc).
#include "runtime/interposers/system_wait.hpp"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

namespace callmon::rt {

namespace {

struct Cancelled {
  pid_t pid;
  void (*done)(void*);
  void* arg;
};

void on_cancel(void* p) {
  auto* c = static_cast<Cancelled*>(p);
  kill(c->pid, SIGKILL);
  while (waitpid(c->pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  c->done(c->arg);
}

}  // namespace

int system_wait(pid_t pid, int* status, void (*done)(void*), void* arg) {
  Cancelled c{pid, done, arg};
  volatile int r = 0;  // set after pthread_cleanup_push's setjmp
  pthread_cleanup_push(on_cancel, &c);
  while (waitpid(pid, status, 0) < 0) {
    if (errno != EINTR) {
      r = -1;
      break;
    }
  }
  pthread_cleanup_pop(0);
  return r;
}

}  // namespace callmon::rt
