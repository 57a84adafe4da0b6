/* Fault: a program that does what breaks recorders which keep a descriptor or a relative
 * path. Step by step it closes every descriptor above stderr (close_range, or a loop up to
 * 1024), dup2()s /dev/null over 0 and 3..63 (stdout and stderr are put back from a saved
 * copy), changes directory to / and lowers RLIMIT_NOFILE to 16. After each step it calls
 * instrumented code on the main thread (enough to need new file windows with 64 KiB chunks)
 * and in a new thread (a new trace file), and at the end forks a child (a new process
 * file). A file it writes itself must hold exactly what it wrote. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define MAIN_CALLS 3000
#define THREAD_CALLS 1000

static volatile long sink;

COUNTED void work(long i) { sink = sink + i; }

COUNTED void in_thread(void) {
  for (long i = 0; i < THREAD_CALLS; ++i) work(i);
}

static void* thread_main(void* arg) {
  (void)arg;
  in_thread();
  return NULL;
}

/* The calls made after one step: MAIN_CALLS work() here, THREAD_CALLS in a new thread. */
COUNTED void after_step(void) {
  for (long i = 0; i < MAIN_CALLS; ++i) work(i);
  pthread_t t;
  if (pthread_create(&t, NULL, thread_main, NULL) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    exit(3);
  }
  pthread_join(t, NULL);
}

COUNTED void close_all_above_stderr(void) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0) return;
#endif
  for (int fd = 3; fd < 1024; ++fd) close(fd);
}

COUNTED void in_child(void) {
  for (long i = 0; i < 500; ++i) work(i);
}

int main(void) {
  /* A file of our own, opened after the descriptors changed: it must stay ours. */
  close_all_above_stderr();
  after_step();

  int saved_out = fcntl(1, F_DUPFD_CLOEXEC, 200);
  int saved_err = fcntl(2, F_DUPFD_CLOEXEC, 201);
  int null = open("/dev/null", O_RDWR);
  if (saved_out < 0 || saved_err < 0 || null < 0) return 4;
  dup2(null, 0);
  for (int fd = 3; fd < 64; ++fd)
    if (fd != null) dup2(null, fd);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  after_step();

  char own[4096];
  if (!getcwd(own, sizeof own - 32)) return 5;
  strcat(own, "/own_file.txt");
  if (chdir("/") != 0) return 6;
  after_step();

  struct rlimit small = {16, 16};
  if (setrlimit(RLIMIT_NOFILE, &small) != 0) return 7;
  for (int fd = 3; fd < 64; ++fd) close(fd);
  int mine = open(own, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (mine < 0) return 8;
  after_step();

  pid_t child = fork();
  if (child == 0) {
    in_child();
    return 0; /* through main(), like the parent */
  }
  int status = 0;
  waitpid(child, &status, 0);
  after_step();

  /* Nothing but our own line may be in our file. */
  if (write(mine, "mine\n", 5) != 5) return 9;
  char back[64];
  ssize_t n = pread(mine, back, sizeof back, 0);
  printf("own file %zd bytes%s, child status %d\n", n,
         n == 5 && memcmp(back, "mine\n", 5) == 0 ? " ok" : " WRONG", status);
  unlink(own);
  return 0;
}
