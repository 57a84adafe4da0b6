/* errno must pass through the hooks unchanged, including the first hook of the process and
 * of a thread, which set up files. To make that set-up meet a failing system call, the
 * thread first creates the file name the runtime will try first for it (open with O_EXCL
 * then fails with EEXIST and the runtime picks the next name). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"
#include "start_env.h"

COUNTED int read_errno(void) { return errno; }

/* Not instrumented: the first hook of this thread is read_errno's. */
NOT_INSTRUMENTED static void* thread_main(void* arg) {
  (void)arg;
  char taken[4096] = "";
  const char* dir = start_env_var("CALLMON_DIR");
  if (dir) {
    snprintf(taken, sizeof taken, "%s/%d.0.%d.events", dir, (int)getpid(), (int)gettid());
    close(open(taken, O_CREAT | O_WRONLY, 0644));
  }
  errno = 99;
  int inside = read_errno();
  int after = errno;
  if (taken[0]) unlink(taken);
  printf("thread: inside %d after %d\n", inside, after);
  return NULL;
}

int main(void) {
  errno = 42;
  int inside = read_errno();
  int after = errno;
  printf("main: inside %d after %d\n", inside, after);
  pthread_t t;
  pthread_create(&t, NULL, thread_main, NULL);
  pthread_join(t, NULL);
  return 0;
}
