// system()'s wait (system_wait.hpp). The cancellation unwinds the thread's stack, and only a
// handler that unwinding runs can clean up: this file is compiled with -fexceptions, which
// the runtime's others are not (runtime/CMakeLists.txt), so that pthread_cleanup_push's
// handler runs.
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
  int r = 0;
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
