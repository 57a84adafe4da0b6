/* What a program does after changing how the recorder may write (tests/programs/
 * fsize_limit.c, chroot_thread.c): `thread_steps` calls of step() on a new thread, joined,
 * then `child_steps` on a fork child, which exits with 5 (its status returned), then
 * `main_steps` on the calling thread: every way the runtime opens a file (a new thread's
 * event file, a fork child's meta and event files, chunk switches). */
#ifndef CALLMON_TEST_THREAD_CHILD_STEPS_H
#define CALLMON_TEST_THREAD_CHILD_STEPS_H

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;
__attribute__((noinline)) void step(long i) { sink += i; }
__attribute__((noinline)) void* worker(void* arg) {
  for (long i = 0; i < (long)arg; ++i) step(i);
  return 0;
}

static int thread_child_steps(long thread_steps, long child_steps, long main_steps) {
  pthread_t t;
  pthread_create(&t, 0, worker, (void*)thread_steps);
  pthread_join(t, 0);
  pid_t child = fork();
  if (child == 0) {
    for (long i = 0; i < child_steps; ++i) step(i);
    _exit(5);
  }
  int status = 0;
  waitpid(child, &status, 0);
  for (long i = 0; i < main_steps; ++i) step(i);
  return WEXITSTATUS(status);
}

#endif
