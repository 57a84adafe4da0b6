/* A server-like fixture for `callmon record -p` (tests/attach/run_attach.py): a main thread
 * reads requests from stdin, one per line, and hands each to a pool of worker threads; it
 * waits for the answer and prints it, so the output is the same whatever the threads do.
 *
 *   W <k>   work: serve(k) calls step(i) for i < k, each step calls leaf once:
 *           exactly 1 + 2k calls of the fixture's functions per request; serve also calls
 *           libc's strlen and memcpy once each (library calls, counted exactly)
 *   H       hold: serve_hold() blocks reading one byte from the file descriptor given as
 *           argv[1] (the test keeps the call open across a detach, then writes the byte)
 *   N       nested hold: handle() calls work(), which blocks reading one byte from argv[1]'s
 *           descriptor, then calls leaf(byte); handle() then calls step(2) (attached while
 *           it blocks, the test knows which frames are open: worker, handle, work)
 *   C       the same as N through handle_cold() -> work_cold(), whose read is on a path gcc
 *           moves to the split-off part work_cold.cold (it calls the cold function rare()
 *           first): a frame open at the attach whose pc is in `work_cold.cold`
 *   P <k>   plugin: dlopen's the library named by $ATTACH_PLUGIN (attach_plugin.c) unless it
 *           is loaded, and calls its plugin_run(k) through dlsym
 *   D       dlclose's the plugin (answer 0)
 *   L       late load: dlopen's the plugin through a pointer to dlopen taken at the start
 *           (before any attach: no redirected GOT word sees this call) and finds plugin_run
 *           through such a pointer to dlsym; calls nothing (answer 0)
 *   R <k>   calls the plugin_run(k) L found
 *   X       starts a thread that dlopen's the plugin, calls plugin_run(1) and dlclose's it,
 *           over and over, until Y (answer 0); Y stops and joins it (answer 0)
 *   Z       the same as X through the pointers to dlopen, dlsym and dlclose taken at the start
 *           (the late churn: modules loaded and closed behind callmon's back); Y stops it
 *   Q       quit: the workers end, the program prints its total and exits with status 3
 *
 * Built with nop sleds (-fpatchable-function-entry=5), -pg -mfentry, -pg, or
 * -finstrument-functions; noinline keeps every call a call at -O2. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 3
#define NOINLINE __attribute__((noinline))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static char pending_kind;  /* 0: none; 'W', 'H' or 'Q' */
static long pending_arg;
static int answered;
static int hold_fd = 3;
static long answer;

NOINLINE long leaf(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

NOINLINE long step(long i) { return leaf(i) % 1000003; }

static char request_text[32] = "request";
static volatile size_t copy_len = 8;  /* unknown to the compiler: memcpy stays a call */

NOINLINE long serve(long k) {
  // Through the PLT (lengths only known at run time): one library call each.
  char copy[32];
  memcpy(copy, request_text, copy_len);
  size_t len = strlen(request_text);
  __asm__ volatile("" ::"r"(len), "r"(copy) : "memory");
  long sum = 0;
  for (long i = 0; i < k; ++i) sum += step(i);
  return sum;
}

NOINLINE long serve_hold(void) {
  char c = 0;
  if (read(hold_fd, &c, 1) != 1) return -1;
  return c;
}

NOINLINE long work(void) {
  char c = 0;
  if (read(hold_fd, &c, 1) != 1) return -1;
  return leaf(c);
}

NOINLINE long handle(void) { return work() + step(2); }

__attribute__((cold, noinline)) void rare(void) { __asm__ volatile("" ::: "memory"); }

static volatile long cold_arg = 42;  /* unknown to the compiler: both paths stay */

NOINLINE long work_cold(long x) {
  if (x == 42) {  /* calls a cold function: gcc moves this path to work_cold.cold */
    rare();
    char c = 0;
    if (read(hold_fd, &c, 1) != 1) return -1;
    return leaf(c);
  }
  return leaf(x);
}

NOINLINE long handle_cold(void) { return work_cold(cold_arg) + step(2); }

static void* plugin;
/* Taken at the start (main), before any attach: calls through them go through no GOT word. */
static void* (*volatile early_dlopen)(const char*, int);
static void* (*volatile early_dlsym)(void*, const char*);
static int (*volatile early_dlclose)(void*);
static long (*late_run)(long);
static volatile int churn_stop;
static pthread_t churn_thread;

static void* churn(void* arg) {
  (void)arg;
  const char* path = getenv("ATTACH_PLUGIN");
  while (!churn_stop) {
    void* h = dlopen(path, RTLD_NOW);
    if (!h) break;
    long (*run)(long) = (long (*)(long))dlsym(h, "plugin_run");
    if (run) run(1);
    dlclose(h);
  }
  return NULL;
}

static void* late_churn(void* arg) {
  (void)arg;
  const char* path = getenv("ATTACH_PLUGIN");
  while (!churn_stop) {
    void* h = early_dlopen(path, RTLD_NOW);
    if (!h) break;
    long (*run)(long) = (long (*)(long))early_dlsym(h, "plugin_run");
    if (run) run(1);
    early_dlclose(h);
  }
  return NULL;
}

static long plugin_request(char kind, long k) {
  if (kind == 'X') return pthread_create(&churn_thread, NULL, churn, NULL);
  if (kind == 'Z') return pthread_create(&churn_thread, NULL, late_churn, NULL);
  if (kind == 'Y') {
    churn_stop = 1;
    return pthread_join(churn_thread, NULL);
  }
  if (kind == 'L') {
    void* h = early_dlopen(getenv("ATTACH_PLUGIN"), RTLD_NOW);
    late_run = h ? (long (*)(long))early_dlsym(h, "plugin_run") : NULL;
    return late_run ? 0 : -1;
  }
  if (kind == 'R') return late_run ? late_run(k) : -1;
  if (kind == 'D') {
    if (plugin) dlclose(plugin);
    plugin = NULL;
    return 0;
  }
  const char* path = getenv("ATTACH_PLUGIN");
  if (!plugin && path) plugin = dlopen(path, RTLD_NOW);
  if (!plugin) return -1;
  long (*run)(long) = (long (*)(long))dlsym(plugin, "plugin_run");
  return run ? run(k) : -2;
}

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (pending_kind == 0) pthread_cond_wait(&cond, &lock);
    char kind = pending_kind;
    long k = pending_arg;
    if (kind == 'Q') break;  /* left pending: the other workers see it too */
    pending_kind = 0;
    pthread_mutex_unlock(&lock);
    long r = kind == 'H' ? serve_hold() : kind == 'N' ? handle() : kind == 'C' ? handle_cold()
             : strchr("PDLRXYZ", kind) ? plugin_request(kind, k) : serve(k);
    pthread_mutex_lock(&lock);
    answer = r;
    answered = 1;
    pthread_cond_broadcast(&cond);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) hold_fd = atoi(argv[1]);
  early_dlopen = dlopen;
  early_dlsym = dlsym;
  early_dlclose = dlclose;
  pthread_t threads[WORKERS];
  for (int i = 0; i < WORKERS; ++i) pthread_create(&threads[i], NULL, worker, NULL);
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  char line[64];
  long n = 0, total = 0;
  while (fgets(line, sizeof line, stdin)) {
    char kind = line[0];
    if (!strchr("WHNCPDQLRXYZ", kind)) continue;
    pthread_mutex_lock(&lock);
    pending_kind = kind;
    pending_arg = kind == 'W' || kind == 'P' || kind == 'R' ? atol(line + 1) : 0;
    pthread_cond_broadcast(&cond);
    if (kind == 'Q') {
      pthread_mutex_unlock(&lock);
      break;
    }
    answered = 0;
    while (!answered) pthread_cond_wait(&cond, &lock);
    long r = answer;
    pthread_mutex_unlock(&lock);
    ++n;
    total += r;
    printf("ok %ld %ld\n", n, r);
  }
  for (int i = 0; i < WORKERS; ++i) pthread_join(threads[i], NULL);
  printf("served %ld requests, total %ld\n", n, total);
  return 3;
}
