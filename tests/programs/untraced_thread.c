/* Threads whose recording cannot be set up (tests/e2e/run_untraced.py): each worker, before
 * any call of its own is instrumented, lets main fill every name the runtime would give its
 * event file (<key>.<tid>.events and <key>.<tid>-1 ... -999.events, key "<pid>.0";
 * docs/format.md), so its first hook finds no file it can create. It then makes instrumented
 * calls and library calls (strlen, memcpy through the PLT) as any thread would; once it is
 * done main gives the names back (removes the empty files). Main's own calls are recorded
 * as usual.
 *
 * Prints the workers' results and main's: the same with and without callmon. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "start_env.h"

#define NOINLINE __attribute__((noinline))
#define NOINST __attribute__((no_instrument_function))

NOINLINE long step(long i) { return i * 3 + 1; }

static volatile size_t text_len = 11; /* unknown to the compiler: the calls stay calls */
static char text[32] = "hello world";

NOINLINE long rounds(long n) {
  long s = 0;
  char copy[32];
  for (long i = 0; i < n; ++i) {
    s += step(i) % 7;
    memcpy(copy, text, text_len);
    s += (long)strlen(text) - (long)text_len;
  }
  return s;
}

static long worker_tid;   /* set by the worker, read by main */
static int files_blocked; /* set by main once the names are taken */

/* Nothing instrumented and no library call until main has taken the names: the thread id by
 * a system call of its own, the wait by atomic loads. */
NOINST static void* worker(void* arg) {
  long tid;
  __asm__ volatile("syscall" : "=a"(tid) : "0"((long)SYS_gettid) : "rcx", "r11", "memory");
  __atomic_store_n(&worker_tid, tid, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&files_blocked, __ATOMIC_ACQUIRE)) __asm__ volatile("pause");
  return (void*)rounds((long)arg);
}

/* Takes (`take`) or gives back every name of thread `tid`'s event file. */
NOINLINE static void names(const char* dir, long tid, int take) {
  char path[4200];
  for (int n = 0; n < 1000; ++n) {
    if (n)
      snprintf(path, sizeof path, "%s/%d.0.%ld-%d.events", dir, (int)getpid(), tid, n);
    else
      snprintf(path, sizeof path, "%s/%d.0.%ld.events", dir, (int)getpid(), tid);
    if (!take) {
      unlink(path);
      continue;
    }
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd >= 0) close(fd);
  }
}

int main(void) {
  const char* dir = start_env_var("CALLMON_DIR");
  for (int w = 0; w < 2; ++w) {
    __atomic_store_n(&worker_tid, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&files_blocked, 0, __ATOMIC_RELEASE);
    pthread_t t;
    pthread_create(&t, 0, worker, (void*)3000L);
    long tid;
    while (!(tid = __atomic_load_n(&worker_tid, __ATOMIC_ACQUIRE))) sched_yield();
    if (dir) names(dir, tid, 1);
    __atomic_store_n(&files_blocked, 1, __ATOMIC_RELEASE);
    void* result;
    pthread_join(t, &result);
    if (dir) names(dir, tid, 0); /* the recording holds no empty file */
    printf("worker %d: %ld\n", w, (long)result);
  }
  printf("main: %ld\n", rounds(1000));
  return 0;
}
