// Threads ended by glibc's forced unwind, through frames whose C++ destructors must run
// as without callmon (docs/patching.md, "Forced unwinds"): pthread_exit from a function
// with no destructor of its own under two that have one, and pthread_cancel of a thread
// blocked in read(2) (a library call recorded with its return address redirected) and of
// one that reaches pthread_testcancel. Each destructor prints its name.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct Guard {
  const char* name;
  ~Guard() {
    printf("~%s\n", name);
    fflush(stdout);
  }
};

__attribute__((noinline)) void leave() { pthread_exit(nullptr); }
__attribute__((noinline)) void middle() {
  Guard g{"middle"};
  leave();
}
__attribute__((noinline)) void* exiter(void*) {
  Guard g{"exiter"};
  middle();
  return nullptr;
}

__attribute__((noinline)) void block(int fd) {
  char c;
  if (read(fd, &c, 1) < 0) perror("read");
}
__attribute__((noinline)) void blocked_reader(int fd) {
  Guard g{"blocked_reader"};
  block(fd);
}
__attribute__((noinline)) void* reader(void* p) {
  Guard g{"reader"};
  blocked_reader(*static_cast<int*>(p));
  return nullptr;
}

volatile int g_go;
__attribute__((noinline)) void spin_until_cancelled() {
  while (!g_go) {
  }
  pthread_testcancel();
}
__attribute__((noinline)) void* spinner(void*) {
  Guard g{"spinner"};
  spin_until_cancelled();
  return nullptr;
}

int main() {
  pthread_t t;
  pthread_create(&t, nullptr, exiter, nullptr);
  pthread_join(t, nullptr);

  int fds[2];
  if (pipe(fds) != 0) return 1;
  pthread_create(&t, nullptr, reader, &fds[0]);
  usleep(50000);  // blocked in read by then (a later cancel acts there all the same)
  pthread_cancel(t);
  void* result;
  pthread_join(t, &result);
  printf("reader cancelled: %s\n", result == PTHREAD_CANCELED ? "yes" : "no");

  pthread_create(&t, nullptr, spinner, nullptr);
  pthread_cancel(t);
  g_go = 1;
  pthread_join(t, &result);
  printf("spinner cancelled: %s\n", result == PTHREAD_CANCELED ? "yes" : "no");
  return 0;
}
